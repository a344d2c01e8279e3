"""A/B comparison of two judgment sets on one corpus (two rubric versions, or two judges with one
rubric). The pairing and every per-row statistic run as SQL over the warehouse
(`compare_*.sql`); Python adds what SQL cannot do in one pass: Kendall's tau-b (scipy), the paired
bootstrap interval and McNemar's test (statsmodels)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from rubricflow.errors import CheckFailed, InputError
from rubricflow.rubrics.algebra import changed_criteria
from rubricflow.rubrics.compiler import Bundle, compile_for_scoring, compile_or_raise
from rubricflow.rubrics.formats import rubric_from_data
from rubricflow.rubrics.library import Library, LibraryError, resolve
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.stats import compare_defaults as defaults
from rubricflow.warehouse import db, steps
from rubricflow.warehouse.store import Store

JudgmentSet = tuple[str, str]  # (rubric_hash, judge_hash)


class CompareError(CheckFailed):
    """The two sides cannot be paired: no judgments, no match, or several judgment sets on one side."""


class MixedHashesError(CompareError):
    pass


def rubric_hash_of(ref: str) -> str | None:
    """The content hash of a rubric file or library name; None when `ref` names neither."""
    bundle = bundle_of(ref)
    return bundle.hash if bundle is not None else None


def bundle_of(ref: str) -> Bundle | None:
    """The compiled rubric of a rubric file or library name; None when `ref` names neither."""
    if not Path(ref).is_file():
        try:
            Library().get(ref)
        except LibraryError:
            return None
    return compile_or_raise(resolve(ref), source=ref)


def judgment_sets(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    ref: str,
    judge_hash: str | None,
    allow_mixed: bool,
    side: str,
    judge_prefix: str | None = None,
) -> list[JudgmentSet]:
    """The judgment sets one side of a comparison names. `ref` is a rubric file or library name
    (one exact version), a rubric hash prefix, or a rubric id / id@version as registered in the
    warehouse. `judge_prefix` picks a judge setup by its hash prefix (two setups of one model: another
    strategy, temperature or seed). More than one set is refused unless `allow_mixed`."""
    exact = rubric_hash_of(ref)
    found = db.fetch(
        con, "judgment_sets.sql", corpus=corpus, judge=judge_hash, judge_prefix=judge_prefix, exact=exact, ref=ref
    )
    rows = [(r["rubric_hash"], r["judge_hash"], r["rubric_id"], r["version"]) for r in found]
    if not rows:
        raise CompareError(
            f"side {side}: no judgments of {ref!r} on corpus {corpus!r}"
            + (" with that judge" if judge_hash or judge_prefix else "")
            + "; score it first (`rubricflow score`, or `rubricflow compare` without --no-score)"
        )
    if len(rows) > 1 and not allow_mixed:
        listed = "; ".join(f"{rid}@{ver} rubric {rh[:12]} judge {jh[:12]}" for rh, jh, rid, ver in rows)
        raise MixedHashesError(
            f"side {side}: {ref!r} matches {len(rows)} judgment sets on corpus {corpus!r} ({listed}); comparing them "
            "would mix rubric versions or judges. Name one version (id@version or a hash prefix) and --model "
            f"or --judge-hash-{side.lower()} (a judge hash prefix), or pass --allow-mixed to take each text's latest judgment"
        )
    return [(rh, jh) for rh, jh, _, _ in rows]


def scoring_sides(refs: tuple[str, str], judges: tuple[JudgeConfig | None, JudgeConfig | None]) -> list[JudgmentSet]:
    """The judgment set each side's scoring will land in, both rubrics resolved and compiled before
    any call: a side B that does not resolve must not leave side A's cells bought."""
    sides = []
    for ref, judge in zip(refs, judges, strict=True):
        bundle = compile_for_scoring(resolve(ref), source=ref)
        sides.append((bundle.hash, (judge or JudgeConfig()).for_rubric(bundle.rubric).judge_hash()))
    return sides


def landed_sides(
    warehouse_path: str | Path,
    corpus: str,
    refs: tuple[str, str],
    judges: tuple[JudgeConfig | None, JudgeConfig | None],
    allow_mixed: bool,
    prefixes: tuple[str | None, str | None] = (None, None),
) -> tuple[list[JudgmentSet], list[JudgmentSet]]:
    """The landed judgment sets of each side (`judgment_sets`), for an A/B that judges nothing."""
    named = Store(warehouse_path).execute_fn
    a, b = (
        named(judgment_sets, corpus, ref, _judge_hash(judge, ref), allow_mixed, side, prefix)
        for ref, judge, side, prefix in zip(refs, judges, "AB", prefixes, strict=True)
    )
    return a, b


def _judge_hash(judge: JudgeConfig | None, ref: str) -> str | None:
    """A side's judge is pinned only when a model is named; otherwise any judge that scored it. The
    judge as its runs judged the rubric: the rubric's execution strategy where none was given."""
    if judge is None or "model" not in judge.model_fields_set:
        return None
    bundle = bundle_of(ref)
    return (judge.for_rubric(bundle.rubric) if bundle is not None else judge).judge_hash()


def refuse_same_sides(a: list[JudgmentSet], b: list[JudgmentSet], refs: tuple[str, str]) -> None:
    """One rubric version judged by one judge setup on both sides: the A/B would compare a judgment
    set with itself (every delta 0) and still look like a result, so it is refused as bad input."""
    if sorted(a) != sorted(b):
        return
    raise InputError(
        f"--a {refs[0]!r} and --b {refs[1]!r} are one rubric version (rubric {a[0][0][:12]}) judged by one "
        f"judge setup (judge {a[0][1][:12]}): nothing to compare; give --b another rubric version, or each "
        "side its own judge (--model-a/--model-b, or --judge-hash-a/--judge-hash-b with --no-score)"
    )


def refuse_self_comparisons(
    warehouse_path: str | Path,
    corpus: str,
    refs: tuple[str, str],
    pairs: list[tuple[JudgeConfig, JudgeConfig]],
    landed: bool,
    allow_mixed: bool = False,
    prefixes: tuple[str | None, str | None] = (None, None),
) -> None:
    """Every A/B a command would run (one per judge pair), checked before any of them starts: both
    rubrics resolve (scoring) or both sides' landed sets are found (`landed`), and neither is the other."""
    for judges in pairs:
        if landed:
            a, b = landed_sides(warehouse_path, corpus, refs, judges, allow_mixed, prefixes)
        else:
            a, b = ([side] for side in scoring_sides(refs, judges))
        refuse_same_sides(a, b, refs)


@dataclass
class Comparison:
    corpus: str
    a: list[JudgmentSet]
    b: list[JudgmentSet]
    rubric_a: str
    rubric_b: str
    summary: dict
    criteria: list[dict]
    flips: list[dict]
    rates: list[dict]
    movers: list[dict]
    added_criteria: list[str] = field(default_factory=list)
    removed_criteria: list[str] = field(default_factory=list)
    histogram: list[dict] = field(default_factory=list)  # texts per score bin under A and B
    scatter: list[tuple[float, float]] = field(default_factory=list)  # a sample of (A, B) score pairs
    deltas: list[dict] = field(default_factory=list)  # texts per bin of B's score less A's (the A/B page's picture)

    def to_json(self) -> str:
        """JSON a reader takes: an undefined figure (NaN) as null, not the bare NaN no JSON allows."""
        return json.dumps(_nulled(asdict(self)), default=str, indent=2, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Comparison:
        data = json.loads(text)
        sides = {k: [tuple(s) for s in data[k]] for k in ("a", "b")}
        return cls(**(data | sides | {"scatter": [tuple(p) for p in data["scatter"]]}))


def _sides(a: list[JudgmentSet], b: list[JudgmentSet]) -> str:
    return json.dumps({"a": [list(s) for s in a], "b": [list(s) for s in b]})


def stored_comparison(
    con: duckdb.DuckDBPyConnection, corpus: str, a: list[JudgmentSet], b: list[JudgmentSet], options: dict | None
) -> Comparison | None:
    """The A/B of these sides as last computed, while the corpus's analytics have not moved since
    (and, given `options`, computed with them); None otherwise."""
    found = db.fetch(
        con, "ab_result.sql", corpus=corpus, sides=_sides(a, b), options=json.dumps(options) if options else None
    )
    return Comparison.from_json(found[0]["result"]) if found else None


def compared(
    warehouse_path: str | Path,
    corpus: str,
    a: list[JudgmentSet],
    b: list[JudgmentSet],
    top: int = defaults.TOP,
    resamples: int = defaults.RESAMPLES,
    level: float = 0.95,
) -> Comparison:
    """The A/B of two resolved sides: the stored one while it is current, else computed now (on a
    read-only connection) and stored for the next question (a short write). `level` is the
    bootstrap intervals' confidence (stored with the options only when not the usual 95%)."""
    options = compare_options(top, resamples, level)
    with db.reader(warehouse_path) as con:
        found = stored_comparison(con, corpus, a, b, options)
        if found is not None:
            return found
        result, record = _computed(con, corpus, a, b, options)
    with db.writer(warehouse_path) as con:
        db.run_sql(con, "record_ab_result.sql", **record)
    return result


def compare_options(top: int = defaults.TOP, resamples: int = defaults.RESAMPLES, level: float = 0.95) -> dict:
    """The options a comparison is computed and stored with (`compare(**options)`; `ab_result.sql`
    finds a stored one by them): the defaults give what `rubricflow compare` prints."""
    options: dict = {"top": top, "resamples": resamples, "seed": defaults.SEED}
    if level != 0.95:
        options["level"] = level
    return options


def _computed(
    con: duckdb.DuckDBPyConnection, corpus: str, a: list[JudgmentSet], b: list[JudgmentSet], options: dict
) -> tuple[Comparison, dict]:
    """The comparison computed now, and its row for record_ab_result.sql (with the corpus's
    analytics version it was computed at, and the seconds it took)."""
    version = db.fetch(con, "analytics_version.sql", corpus=corpus)[0]["version"]
    started = time.perf_counter()
    result = compare(con, corpus, a, b, **options)
    record = {
        "corpus": corpus,
        "sides": _sides(a, b),
        "options": json.dumps(options),
        "version": version,
        "seconds": time.perf_counter() - started,
        "result": result.to_json(),
    }
    return result, record


def refresh_stored(con: duckdb.DuckDBPyConnection, run_id: str) -> int:
    """Recompute the stored comparisons on a finished run's corpus that its work made stale, so
    the morning after a nightly run reads current A/B results at once. Returns how many."""
    stale = db.fetch(con, "stale_ab_results.sql", run=run_id)
    for row in stale:
        sides = json.loads(row["sides"])
        a, b = ([tuple(s) for s in sides[k]] for k in ("a", "b"))
        _, record = _computed(con, row["corpus_id"], a, b, json.loads(row["options"]))
        db.run_sql(con, "record_ab_result.sql", **record)
    return len(stale)


def compare(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    a: list[JudgmentSet],
    b: list[JudgmentSet],
    top: int = defaults.TOP,
    resamples: int = defaults.RESAMPLES,
    seed: int = defaults.SEED,
    level: float = 0.95,
) -> Comparison:
    """Every A/B statistic for two resolved sides (see `judgment_sets`); intervals at `level`."""
    from scipy import stats  # imported when used (~1 s): the scoring flow imports this module for `refresh_stored`

    from rubricflow.tasks.stats.agreement import MIN_CORRELATION_TEXTS

    for side, sets in (("a", a), ("b", b)):
        for rubric_hash, judge_hash in sets:
            steps.run_sql(con, "compare_side.sql", side=side, corpus=corpus, rubric=rubric_hash, judge=judge_hash)
    if len(a) > 1 or len(b) > 1:
        steps.run_sql(con, "compare_latest.sql")
    steps.run_sql(con, "compare_pair.sql")
    summary = db.fetch(con, "compare_summary.sql")[0]
    paired = con.execute(db.sql("compare_paired.sql")).fetchnumpy()
    few = len(paired["score_a"]) < MIN_CORRELATION_TEXTS  # two points give +/-1 whatever the agreement
    summary["kendall_tau_b"] = (
        None if few else float(stats.kendalltau(paired["score_a"], paired["score_b"], variant="b").statistic)
    )
    for name in ("pearson", "spearman", "kendall_tau_b"):
        if few or not _defined(summary[name]):  # too few texts, or one side gave every text one score
            summary[name] = None
    intervals = _bootstrap(con, resamples, seed, level)
    summary["mean_delta_ci"] = intervals.get(None)
    criteria = db.fetch(con, "compare_criteria.sql")
    changed, added, removed = _criteria_changes(con, a[0][0], b[0][0])
    for row in criteria:
        row["changed"] = row["criterion_id"] in changed
        row["mean_delta_ci"] = intervals.get(row["criterion_id"])
        row["mcnemar_p"] = _mcnemar(row) if row["is_binary"] else None
    names = {r["rubric_hash"]: r["name"] for r in db.fetch(con, "rubric_names.sql")}
    return Comparison(
        corpus=corpus,
        a=a,
        b=b,
        rubric_a=names.get(a[0][0], a[0][0]),
        rubric_b=names.get(b[0][0], b[0][0]),
        summary=summary,
        criteria=criteria,
        flips=db.fetch(con, "compare_flips.sql"),
        rates=db.fetch(con, "compare_rates.sql", corpus=corpus),
        movers=db.fetch(con, "compare_movers.sql", corpus=corpus, top=top),
        added_criteria=added,
        removed_criteria=removed,
        histogram=db.fetch(con, "compare_histogram.sql"),
        scatter=[(r["score_a"], r["score_b"]) for r in db.fetch(con, "compare_scatter.sql")],
        deltas=db.fetch(con, "compare_delta_histogram.sql"),
    )


def _bootstrap(con: duckdb.DuckDBPyConnection, resamples: int, seed: int, level: float = 0.95) -> dict:
    from rubricflow.tasks.stats.agreement import bootstrap_mean_ci  # imports scipy.stats (~1 s): when used

    grouped: dict = {}
    for criterion, delta, n in con.execute(db.sql("compare_deltas.sql")).fetchall():
        values, counts = grouped.setdefault(criterion, ([], []))
        values.append(delta)
        counts.append(n)
    return {k: bootstrap_mean_ci(v, c, resamples=resamples, level=level, seed=seed) for k, (v, c) in grouped.items()}


def _defined(value: float | None) -> bool:
    return value is not None and value == value


def _nulled(value: Any) -> Any:
    """`value` with every NaN (an undefined figure) as None, in lists, tuples and dicts."""
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict):
        return {k: _nulled(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nulled(v) for v in value]
    return value


def _mcnemar(row: dict) -> float | None:
    return mcnemar_p(row["pass_to_fail"], row["fail_to_pass"])


def mcnemar_p(pass_to_fail: int, fail_to_pass: int) -> float:
    """McNemar's test of the discordant pairs (exact below 25 of them): are the flips one-sided?"""
    from statsmodels.stats.contingency_tables import (
        mcnemar,  # imported when used: it starts threads, and the warm worker forks with none alive
    )

    b, c = pass_to_fail, fail_to_pass
    if b + c == 0:
        return 1.0
    return float(mcnemar([[0, b], [c, 0]], exact=b + c < 25).pvalue)


def _criteria_changes(
    con: duckdb.DuckDBPyConnection, hash_a: str, hash_b: str
) -> tuple[set[str], list[str], list[str]]:
    """Criteria whose definition differs between the versions (the rubric diff), and those only one has."""
    docs = {r["rubric_hash"]: r["document"] for r in db.fetch(con, "rubric_documents.sql", a=hash_a, b=hash_b)}
    ra = rubric_from_data(json.loads(docs[hash_a]), f"warehouse rubric {hash_a[:12]}")
    rb = rubric_from_data(json.loads(docs[hash_b]), f"warehouse rubric {hash_b[:12]}")
    ids_a, ids_b = {c.id for c in ra.criteria}, {c.id for c in rb.criteria}
    return changed_criteria(ra, rb), sorted(ids_b - ids_a), sorted(ids_a - ids_b)
