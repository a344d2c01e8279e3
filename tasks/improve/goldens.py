"""Goldens: a rubric's own worked examples, run through the judge and scored with the reference
scorer (`rubrics.scoring`). A golden passes when the verdict matches its `expected` pass/fail and
each of its `expected_scores`."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace

import duckdb

from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.regex import backtracking, backtracking_hits, re2_errors
from rubricflow.rubrics.render import call_units
from rubricflow.rubrics.scoring import Verdict, verdict
from rubricflow.settings import endpoint as configured_endpoint
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell
from rubricflow.tasks.judging.run import Run
from rubricflow.tasks.judging.secrets import scrub
from rubricflow.tasks.judging.shard import Worker
from rubricflow.tasks.judging.verify import hard_violations


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


@dataclass(frozen=True)
class TextJudgment:
    """One text judged outside any corpus: the reference scorer's verdict and each criterion's judgment."""

    verdict: Verdict
    judgments: list  # tasks.judge criterion results, scored or not
    errors: list[str]


def judge_text(
    bundle: Bundle,
    config: JudgeConfig,
    name: str,
    text: str,
    input: str = "",
    context: str = "",
    genre: str | None = None,
) -> TextJudgment:
    """Judge one text with the rubric (no warehouse): a golden, or a rubric under review."""
    rubric = bundle.rubric
    config = config.for_rubric(rubric)  # its execution strategy where none was given
    judge = Worker.get().judge(Run.outside("single", "single", bundle, config))
    judge.new_run()  # this call is the run: its own retry budget and stop rule (what was learned stays)
    sha = hashlib.sha256(text.encode()).hexdigest()
    cells = [
        Cell(f"single-{name}-{u.id}", name, sha, u.id, 0, text, input, context, genre)
        for u in call_units(rubric, config.strategy, genre)
    ]
    outcomes = [Worker.get().submit(judge.judge(c)).result() for c in cells]
    # What the endpoint said is scrubbed here as `land` scrubs it for the warehouse (an endpoint
    # echoing the Authorization header would put the key on the terminal, once per failed call).
    errors = [scrub(o.completion["error"]) or "" for o in outcomes if o.completion["status"] != "ok"]
    judgments = [
        replace(j, rationale=scrub(j.rationale), reason=scrub(j.reason)) for o in outcomes for j in o.judgments
    ]
    values = {j.criterion_id: j.value for j in judgments if j.status == "scored"}
    declared = {d for o in outcomes for d in o.completion["declared_disqualifiers"]}
    regexes = {p.id: p.effective_regex() for p in rubric.patterns}
    violations = hard_violations(rubric, [j for o in outcomes for j in o.judgments])
    v = verdict(rubric, values, genre, matched_patterns(text, regexes), declared, violations)
    return TextJudgment(v, judgments, errors)


def run_goldens(bundle: Bundle, config: JudgeConfig) -> list[GoldenResult]:
    results = []
    for golden in bundle.rubric.goldens:
        judged = judge_text(
            bundle, config, f"golden-{golden.name}", golden.output, golden.input, golden.context, golden.genre
        )
        v = judged.verdict
        values = {j.criterion_id: j.value for j in judged.judgments if j.status == "scored"}
        got = None if v.passed is None else "pass" if v.passed else "fail"
        mismatches = []
        if golden.expected and got != golden.expected:
            mismatches.append(f"expected {golden.expected}, got {got or 'no verdict'} (score {_fmt(v.score)})")
        if golden.expected_label and v.label != golden.expected_label:
            mismatches.append(f"expected {golden.expected_label}, got {v.label or 'no label'} (score {_fmt(v.score)})")
        for cid, want in golden.expected_scores.items():
            if values.get(cid) != want:
                mismatches.append(f"{cid}: expected {want!r}, got {values.get(cid)!r}")
        results.append(
            GoldenResult(
                golden.name,
                golden.expected or golden.expected_label,
                got if golden.expected or not golden.expected_label else v.label,
                v.score,
                v.label,
                tuple(mismatches),
                "; ".join(judged.errors) if judged.errors else None,
            )
        )
    return results


def matched_patterns(text: str, regexes: dict[str, str]) -> set[str]:
    """Pattern ids that match, by the engine the warehouse uses for each: DuckDB's RE2, or the
    backtracking `regex` engine for a pattern RE2 cannot run."""
    if not regexes:
        return set()
    refused = re2_errors(list(regexes.values()))
    matched = {
        pid
        for pid, source in regexes.items()
        if refused[source] and (compiled := backtracking(source)) is not None and backtracking_hits(compiled, text)
    }
    con = duckdb.connect()
    try:
        return matched | {
            pid
            for pid, source in regexes.items()
            if not refused[source]
            and con.execute("SELECT regexp_matches($t, $r)", {"t": text, "r": source}).fetchall()[0][0]
        }
    finally:
        con.close()


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


@contextmanager
def endpoint(judge: dict, on_offline=None) -> Iterator[JudgeConfig]:
    """The judge config to use; with no endpoint in `judge` (nor OPENAI_BASE_URL) the offline judge is
    started for the duration of the block and `on_offline(url)` is told."""
    from rubricflow.tasks.standins.judge_server import RunningServer

    offline = not judge.get("base_url") and not configured_endpoint("OPENAI_BASE_URL")
    with RunningServer() if offline else nullcontext() as server:
        if server is not None:
            judge = {**judge, "base_url": server.base_url}
            if on_offline:
                on_offline(server.base_url)
        yield JudgeConfig(**judge)


def check_goldens(bundles: list[Bundle], judge: dict, on_offline=None):
    """Yield (bundle, results) for every rubric's goldens (see `endpoint` for the judge used)."""
    with endpoint(judge, on_offline) as config:
        for bundle in bundles:
            yield bundle, run_goldens(bundle, config) if bundle.rubric.goldens else []
