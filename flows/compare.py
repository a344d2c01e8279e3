"""The A/B flow: score a corpus with both sides (landed cells are reused, so only missing cells
are judged), then compare the two judgment sets over the warehouse and publish the result."""

# No `from __future__ import annotations` here: a deployment's run builds the flow's parameter model
# from the annotations, and there a string `JudgeConfig` cannot be resolved (every night failed).
from prefect import flow, get_run_logger

from rubricflow.flows.artifacts import artifact_key, publish
from rubricflow.flows.deploy_params import refuse_unset
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.presentation.tables import criterion_rows, md_table, md_text
from rubricflow.tasks.stats import compare_defaults as defaults
from rubricflow.tasks.stats.compare import Comparison, compared, landed_sides, refuse_same_sides, scoring_sides


@flow(name="compare-rubrics", log_prints=True)
def compare_flow(
    corpus_id: str,
    rubric_a: str,
    rubric_b: str,
    warehouse_path: str,
    judge_a: JudgeConfig | None = None,
    judge_b: JudgeConfig | None = None,
    score: bool = True,
    allow_mixed: bool = False,
    top: int = defaults.TOP,
    resamples: int = defaults.RESAMPLES,
    judge_hash_a: str | None = None,
    judge_hash_b: str | None = None,
) -> Comparison:
    """`judge_a` / `judge_b`: each side's judge (two models with one rubric is an A/B too). Both
    sides are resolved before any call (a bad B must not leave A's cells bought), and one rubric
    version with one judge setup on both sides is refused: a set compared with itself. With
    score=False only landed judgments are compared; `judge_hash_a` / `judge_hash_b` (hash prefixes)
    pick one judge setup per side, e.g. two strategies of one model."""
    refuse_unset(corpus_id=corpus_id, rubric_a=rubric_a, rubric_b=rubric_b, warehouse_path=warehouse_path)
    refuse_unset(**{k: j for k, j in (("judge_a", judge_a), ("judge_b", judge_b)) if j is not None})
    logger = get_run_logger()
    refs, judges = (rubric_a, rubric_b), (judge_a, judge_b)
    if score:
        side_a, side_b = scoring_sides(refs, judges)  # both resolved and compiled before any call
        refuse_same_sides([side_a], [side_b], refs)
        ran = [
            score_corpus(corpus_id, ref, warehouse_path, judge or JudgeConfig())
            for ref, judge in zip(refs, judges, strict=True)
        ]
        a, b = ([(r["rubric_hash"], r["judge_hash"])] for r in ran)
    else:
        a, b = landed_sides(warehouse_path, corpus_id, refs, judges, allow_mixed, (judge_hash_a, judge_hash_b))
    result = compared(warehouse_path, corpus_id, a, b, top=top, resamples=resamples)
    logger.info(
        "compared %s vs %s on %s: %s texts paired, mean delta %s",
        result.rubric_a,
        result.rubric_b,
        corpus_id,
        result.summary["texts_paired"],
        result.summary["mean_delta"],
    )
    publish(
        comparison_markdown(result),
        artifact_key("compare", corpus_id, result.rubric_a, result.rubric_b),
        f"A/B {result.rubric_a} vs {result.rubric_b} on {corpus_id}",
    )
    return result


def comparison_markdown(c: Comparison) -> str:
    s = c.summary
    head = {
        k: s[k]
        for k in (
            "texts_both_sides",
            "texts_paired",
            "mean_a",
            "mean_b",
            "mean_delta",
            "mean_delta_ci",
            "pearson",
            "spearman",
            "kendall_tau_b",
            "pass_to_fail",
            "fail_to_pass",
            "label_changes",
            "dq_rate_a",
            "dq_rate_b",
        )
    }
    criteria = criterion_rows(c)
    movers = [{k: r[k] for k in ("text_id", "score_a", "score_b", "delta", "label_a", "label_b")} for r in c.movers]
    extra = ""
    if c.added_criteria or c.removed_criteria:
        extra = (
            f"\nonly in B: {md_text(', '.join(c.added_criteria) or '-')}; "
            f"only in A: {md_text(', '.join(c.removed_criteria) or '-')}\n"
        )
    return (
        f"# A/B: {md_text(c.rubric_a)} vs {md_text(c.rubric_b)} on {md_text(c.corpus)}\n\n"
        + md_table([head])
        + extra
        + "\n## Criteria\n\n"
        + md_table(criteria)
        + "\n## Label flips\n\n"
        + md_table(c.flips)
        + "\n## Disqualifier and pattern rates\n\n"
        + md_table(c.rates)
        + "\n## Texts that moved most\n\n"
        + md_table(movers)
    )
