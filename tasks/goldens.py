"""Goldens: a rubric's own worked examples, run through the judge and scored with the reference
scorer (`rubrics.scoring`). A golden passes when the verdict matches its `expected` pass/fail and
each of its `expected_scores`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import duckdb

from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.regex import backtracking, backtracking_hits, re2_errors
from rubricflow.rubrics.render import call_units
from rubricflow.rubrics.scoring import verdict
from rubricflow.tasks.config import JudgeConfig
from rubricflow.tasks.judge import Cell
from rubricflow.tasks.shard import Worker


@dataclass(frozen=True)
class GoldenResult:
    name: str
    expected: str | None
    got: str | None  # pass | fail | None (unscored)
    score: float | None
    label: str | None
    mismatches: tuple[str, ...]  # why it failed: verdict and/or per-criterion scores
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.error is None


def run_goldens(bundle: Bundle, config: JudgeConfig) -> list[GoldenResult]:
    rubric = bundle.rubric
    judge = Worker.get().judge(bundle, config, f"goldens-{bundle.hash[:12]}-{config.judge_hash()[:12]}", "goldens")
    regexes = {p.id: p.effective_regex() for p in rubric.patterns}
    results = []
    for golden in rubric.goldens:
        sha = hashlib.sha256(golden.output.encode()).hexdigest()
        cells = [Cell(f"golden-{golden.name}-{u.id}", golden.name, sha, u.id, 0, golden.output, golden.input,
                      golden.context, golden.genre) for u in call_units(rubric, config.strategy, golden.genre)]  # type: ignore[arg-type]
        outcomes = [Worker.get().submit(judge.judge(c)).result() for c in cells]
        failed = [o.completion["error"] for o in outcomes if o.completion["status"] != "ok"]
        values = {j.criterion_id: j.value for o in outcomes for j in o.judgments if j.status == "scored"}
        declared = {d for o in outcomes for d in o.completion["declared_disqualifiers"]}
        v = verdict(rubric, values, golden.genre, matched_patterns(golden.output, regexes), declared)
        got = None if v.passed is None else "pass" if v.passed else "fail"
        mismatches = []
        if golden.expected and got != golden.expected:
            mismatches.append(f"expected {golden.expected}, got {got or 'no verdict'} (score {_fmt(v.score)})")
        for cid, want in golden.expected_scores.items():
            if values.get(cid) != want:
                mismatches.append(f"{cid}: expected {want!r}, got {values.get(cid)!r}")
        results.append(GoldenResult(golden.name, golden.expected, got, v.score, v.label, tuple(mismatches),
                                    "; ".join(failed) if failed else None))
    return results


def matched_patterns(text: str, regexes: dict[str, str]) -> set[str]:
    """Pattern ids that match, by the engine the warehouse uses for each: DuckDB's RE2, or the
    backtracking `regex` engine for a pattern RE2 cannot run."""
    if not regexes:
        return set()
    refused = re2_errors(list(regexes.values()))
    matched = {pid for pid, source in regexes.items() if refused[source]
               and (compiled := backtracking(source)) is not None and backtracking_hits(compiled, text)}
    con = duckdb.connect()
    try:
        return matched | {pid for pid, source in regexes.items() if not refused[source]
                          and con.execute("SELECT regexp_matches($t, $r)", {"t": text, "r": source}).fetchall()[0][0]}
    finally:
        con.close()


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def check_goldens(bundles: list[Bundle], judge: dict, on_offline=None):
    """Yield (bundle, results) for every rubric's goldens. With no endpoint in `judge` (nor
    OPENAI_BASE_URL) the offline judge is started for the duration; `on_offline(url)` is told."""
    import os
    from contextlib import nullcontext

    from rubricflow.tasks.judge_server import RunningServer

    offline = not judge.get("base_url") and not os.environ.get("OPENAI_BASE_URL")
    with RunningServer() if offline else nullcontext() as server:
        if offline:
            judge = {**judge, "base_url": server.base_url}
            if on_offline:
                on_offline(server.base_url)
        config = JudgeConfig(**judge)
        for bundle in bundles:
            yield bundle, run_goldens(bundle, config) if bundle.rubric.goldens else []
