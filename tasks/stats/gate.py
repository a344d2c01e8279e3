"""A CI gate: one judgment set of a corpus checked against thresholds (overall score, pass rate,
per criterion) and against a baseline (a rubric version or a run) with the A/B statistics of
`tasks/stats/compare`. A regression fails only when the drop is significant: the paired bootstrap
interval of the mean delta at 1 - alpha lies wholly below zero, or McNemar's test finds more
pass -> fail than fail -> pass at p < alpha.

A gate never passes on too little evidence: coverage below the floor, or a baseline with no
paired text, makes every check an error and the outcome "could not evaluate". Unusable input (an
unknown corpus, rubric or baseline, a baseline that is the gated set itself) is refused: exit 2."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubricflow.errors import InputError, RubricflowError
from rubricflow.tasks.stats.compare import (
    CompareError,
    Comparison,
    JudgmentSet,
    MixedHashesError,
    compared,
    judgment_sets,
)
from rubricflow.warehouse import db

PASSED, FAILED, ERROR = "passed", "failed", "error"
EXIT_CODES = {PASSED: 0, FAILED: 1, ERROR: 3}
REFUSED_EXIT = 2  # unusable input or usage (rubricflow.errors): reported as an error, exit 2


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Thresholds(_Strict):
    overall: float | None = Field(default=None, ge=0, le=1, description="Least mean text score (0-1).")
    pass_rate: float | None = Field(default=None, ge=0, le=1, description="Least share of scored texts that pass.")
    criteria: dict[str, float] = Field(default_factory=dict, description="Least mean unit score per criterion id.")


class Regression(_Strict):
    baseline: str = Field(..., description="A rubric version (id@version, file, hash prefix) or a run id.")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="Significance level of a drop.")
    resamples: int = Field(2000, ge=200, description="Bootstrap resamples.")


class GateConfig(_Strict):
    thresholds: Thresholds = Field(default_factory=Thresholds)
    regression: Regression | None = None
    coverage_floor: float = Field(0.95, gt=0, le=1, description="Least coverage for the gate to evaluate at all.")


def load_config(path: Path) -> GateConfig:
    """The gate file, checked; an unknown key or a bad value is an InputError naming the file and field."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({exc})".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a gate file is a mapping (thresholds, regression, coverage_floor)")
    if not any(data.get(key) for key in ("thresholds", "regression", "coverage_floor")):  # an empty file passed
        raise InputError(f"{path}: the gate file sets no threshold, regression or coverage_floor: it gates nothing")
    try:
        return GateConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InputError(f"{path}: {problems}") from None


@dataclass
class Check:
    """One test case of the gate: a threshold, a regression or the coverage floor."""

    name: str
    kind: str  # coverage | threshold | regression
    status: str  # passed | failed | error
    value: float | None
    limit: str
    message: str


@dataclass
class GateResult:
    corpus: str
    rubric: str
    judgment_set: JudgmentSet
    metrics: dict
    checks: list[Check] = field(default_factory=list)
    baseline: str | None = None
    refused: bool = False  # unusable input: every check an error, but exit 2, not 3

    @property
    def outcome(self) -> str:
        statuses = {c.status for c in self.checks}
        return ERROR if ERROR in statuses else FAILED if FAILED in statuses else PASSED

    @property
    def exit_code(self) -> int:
        return REFUSED_EXIT if self.refused else EXIT_CODES[self.outcome]


def evaluate(warehouse: str | Path, corpus: str, gated: JudgmentSet, config: GateConfig) -> GateResult:
    """Every check of the gate for one judgment set (rubric hash, judge hash) of a corpus."""
    with db.reader(warehouse) as con:
        metrics = db.fetch(con, "gate_metrics.sql", corpus=corpus, rubric=gated[0], judge=gated[1])[0]
        criteria = {
            r["criterion_id"]: r
            for r in db.fetch(con, "gate_criteria.sql", corpus=corpus, rubric=gated[0], judge=gated[1])
        }
        names = {r["rubric_hash"]: r["name"] for r in db.fetch(con, "rubric_names.sql")}
        baseline = _baseline_sets(con, corpus, config.regression.baseline, gated) if config.regression else None
    unknown = sorted(set(config.thresholds.criteria) - set(criteria))
    if unknown:
        raise InputError(
            f"gate thresholds name criteria {unknown} that rubric {names.get(gated[0], gated[0])} lacks; "
            f"its criteria: {', '.join(criteria)}"
        )
    result = GateResult(corpus, names.get(gated[0], gated[0]), gated, metrics)
    result.checks.append(_coverage_check(metrics, config.coverage_floor))
    result.checks += _threshold_checks(metrics, criteria, config.thresholds)
    if config.regression and baseline is not None:
        result.baseline = config.regression.baseline
        c = compared(
            warehouse,
            corpus,
            baseline,
            [gated],
            top=0,
            resamples=config.regression.resamples,
            level=1 - config.regression.alpha,
        )
        result.checks += regression_checks(c, config.regression.alpha)
    if result.checks[0].status != PASSED:  # too little evidence: nothing else may pass or fail on it
        for check in result.checks[1:]:
            check.status, check.message = ERROR, f"not evaluated: {result.checks[0].message}"
    return result


def _baseline_sets(con: duckdb.DuckDBPyConnection, corpus: str, ref: str, gated: JudgmentSet) -> list[JudgmentSet]:
    """The baseline's judgment set: a run id's, else the rubric version's under the gated judge
    (any judge when that one never scored it)."""
    run = db.fetch(con, "run_set.sql", run=ref)
    if run:
        if run[0]["corpus_id"] != corpus:
            raise InputError(f"baseline run {ref} scored corpus {run[0]['corpus_id']!r}, not {corpus!r}")
        found = [(run[0]["rubric_hash"], run[0]["judge_hash"])]
    else:
        found = _rubric_baseline(con, corpus, ref, gated)
    if found == [gated]:  # every delta 0 with a zero-width interval: a vacuous pass
        raise InputError(
            f"gate regression.baseline {ref!r} is the gated judgment set itself (rubric {gated[0][:12]}, "
            f"judge {gated[1][:12]}): nothing to regress against; name another rubric version or run"
        )
    return found


def _rubric_baseline(con: duckdb.DuckDBPyConnection, corpus: str, ref: str, gated: JudgmentSet) -> list[JudgmentSet]:
    """A baseline named as a rubric: unknown, never scored on the corpus or ambiguous is bad input
    (exit 2, as for the gated rubric), not a gate that could not evaluate."""
    try:
        return judgment_sets(con, corpus, ref, gated[1], False, "baseline")
    except RubricflowError:
        pass
    try:
        return judgment_sets(con, corpus, ref, None, False, "baseline")
    except MixedHashesError:
        sets = judgment_sets(con, corpus, ref, None, True, "baseline")
        listed = "; ".join(f"rubric {rh[:12]} judge {jh[:12]}" for rh, jh in sets)
        raise InputError(
            f"gate regression.baseline {ref!r} matches several judgment sets on corpus {corpus!r} ({listed}); "
            "name one version (id@version or a rubric hash prefix) or a run id"
        ) from None
    except CompareError:
        raise InputError(
            f"gate regression.baseline {ref!r} is no run id and no rubric with judgments on corpus {corpus!r}; "
            "name a run id or a rubric version scored on it (`rubricflow score` it first)"
        ) from None


def _coverage_check(metrics: dict, floor: float) -> Check:
    coverage = metrics["coverage"]
    ok = metrics["texts"] > 0 and coverage >= floor
    message = f"coverage {coverage:.1%} of {metrics['texts']} texts ({metrics['scored_texts']} scored)" + (
        f" is at least the floor {floor:.0%}" if ok else f" is below the floor {floor:.0%}: the gate cannot evaluate"
    )
    return Check("coverage", "coverage", PASSED if ok else ERROR, coverage, f">= {floor:g}", message)


def _threshold_checks(metrics: dict, criteria: dict, thresholds: Thresholds) -> list[Check]:
    wanted = [
        ("overall", metrics["overall"], thresholds.overall),
        ("pass_rate", metrics["pass_rate"], thresholds.pass_rate),
    ]
    wanted += [(f"criterion {cid}", criteria[cid]["mean"], least) for cid, least in thresholds.criteria.items()]
    checks = []
    for name, value, least in wanted:
        if least is None:
            continue
        if value is None:
            checks.append(Check(name, "threshold", ERROR, None, f">= {least:g}", f"{name}: nothing scored"))
            continue
        ok = value >= least
        message = f"{name} {value:.4f} {'>=' if ok else '<'} {least:g}"
        checks.append(Check(name, "threshold", PASSED if ok else FAILED, value, f">= {least:g}", message))
    return checks


def regression_checks(c: Comparison, alpha: float) -> list[Check]:
    """Against the baseline (side A of `c`): the mean score, the pass rate and each shared criterion
    fail only on a significant drop; no paired text is an error, not a pass."""
    paired = c.summary["texts_paired"]
    if not paired:
        message = f"no text scored by both the baseline {c.rubric_a} and {c.rubric_b}"
        return [Check("regression overall", "regression", ERROR, None, f"alpha {alpha:g}", message)]
    checks = [_drop_check("regression overall", c.summary["mean_delta"], c.summary["mean_delta_ci"], alpha)]
    checks.append(_flip_check("regression pass_rate", c.summary["pass_to_fail"], c.summary["fail_to_pass"], alpha))
    for row in c.criteria:
        checks.append(
            _drop_check(f"regression criterion {row['criterion_id']}", row["mean_delta"], row["mean_delta_ci"], alpha)
        )
    return checks


def _drop_check(name: str, delta: float | None, ci: tuple[float, float] | list | None, alpha: float) -> Check:
    level = f"{1 - alpha:.0%}"
    if delta is None or ci is None:  # too little evidence is no pass (one paired text passed a -0.58 drop)
        message = f"{name}: too few pairs for an interval, so no drop can be ruled out"
        return Check(name, "regression", ERROR, delta, f"alpha {alpha:g}", message)
    lo, hi = ci
    dropped = hi < 0
    message = f"{name}: delta {delta:+.4f} ({level} CI {lo:+.4f} to {hi:+.4f})" + (
        ": a significant drop" if dropped else ""
    )
    return Check(name, "regression", FAILED if dropped else PASSED, delta, f"alpha {alpha:g}", message)


def _flip_check(name: str, pass_to_fail: int, fail_to_pass: int, alpha: float) -> Check:
    from rubricflow.tasks.stats.compare import mcnemar_p

    p = mcnemar_p(pass_to_fail, fail_to_pass)
    dropped = pass_to_fail > fail_to_pass and p < alpha
    message = f"{name}: pass->fail {pass_to_fail}, fail->pass {fail_to_pass}, McNemar p {p:.4g}" + (
        ": a significant drop" if dropped else ""
    )
    return Check(name, "regression", FAILED if dropped else PASSED, p, f"alpha {alpha:g}", message)


def unevaluated(corpus: str, rubric: str, message: str, refused: bool = False) -> GateResult:
    """The result of a gate whose scoring run failed or scored nothing (exit 3), or whose input was
    unusable (`refused`, exit 2): one error, never a pass."""
    metrics = {"texts": 0, "scored_texts": 0, "overall": None, "pass_rate": None, "coverage": 0.0}
    checks = [Check("score", "score", ERROR, None, "", message)]
    return GateResult(corpus, rubric, ("", ""), metrics, checks, refused=refused)
