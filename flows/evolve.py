"""`improve evolve` as one Prefect flow: rounds of pick the criterion that agrees least with the
humans (training texts), ask the reflection model for mutations, judge the candidate (only the cells
of changed criteria: the rest are adopted by unit fingerprint), and keep it only if the held-out
agreement improves. Every round is recorded in `evolution_rounds`; the same command again resumes.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.compiler import Bundle, compile_or_raise
from rubricflow.rubrics.documents import rubric_to_data
from rubricflow.rubrics.formats import dump_yaml
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.improve import evolve, reflect
from rubricflow.tasks.judging.chat import ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.verify import AnswerError
from rubricflow.tasks.runtime.progress import notify
from rubricflow.warehouse import db
from rubricflow.warehouse.steps import run_sql


@task(name="propose-mutations", cache_policy=NO_CACHE)
def propose(reflect_config: JudgeConfig, messages: list[dict], parent: Bundle) -> tuple[list[dict], Bundle] | str:
    """Ask the reflection model: the mutations and the candidate, or why the answer was refused (an
    expected outcome, not a failed task)."""
    try:
        return reflect.candidate(parent.rubric, ask(reflect_config, messages))
    except reflect.ReflectionRefused as exc:
        return str(exc)
    except AnswerError as exc:  # no usable text (null message, no choices, cut off): a refused round
        return f"the reflection model's answer was unusable ({exc.kind}): {exc}"


@flow(name="evolve-rubric", log_prints=True)
def evolve_flow(
    corpus_id: str,
    rubric: str,
    warehouse_path: str,
    raters: list[str],
    label: str = "overall",
    judge: dict | None = None,
    reflection: dict | None = None,
    max_rounds: int = 3,
    max_calls: int | None = None,
    seed: int = 0,
    held_out_share: float = 0.3,
    output_dir: str = ".",
    shard_size: int = 2000,
) -> dict:
    """`judge` and `reflection` hold JudgeConfig fields (the judge defaults to per_criterion calls, so a
    candidate re-judges only its changed criteria; the reflection model defaults to the judge's
    endpoint). `max_calls` stops before a round once the judge calls spent reach it."""
    logger = get_run_logger()
    judge_config = JudgeConfig(**{"strategy": "per_criterion", **(judge or {})})
    reflect_config = JudgeConfig(
        **{"base_url": judge_config.base_url, "model": judge_config.model, **(reflection or {})}
    )
    start = compile_or_raise(resolve(rubric), source=rubric)
    target = f"{','.join(raters)}:{label}"
    eid = evolve.evolution_id(corpus_id, start.hash, judge_config.judge_hash(), target, seed, held_out_share)
    folder = Path(output_dir)
    (folder / "candidates").mkdir(parents=True, exist_ok=True)
    first = score_corpus(corpus_id, rubric, warehouse_path, judge_config.model_dump(mode="json"), shard_size)
    with db.writer(warehouse_path) as con:
        run_sql(
            con,
            "register_evolution.sql",
            evolution=eid,
            corpus=corpus_id,
            rubric=start.hash,
            judge=judge_config.judge_hash(),
            target=target,
            seed=seed,
            share=held_out_share,
            reflection_model=reflect_config.model,
        )
        train, held_out = evolve.split(con, corpus_id, raters, label, seed, held_out_share)
        recorded = evolve.rounds(con, eid)
    best, spent, spent_now, history = start, 0, 0, []
    judge_fields, where = judge_config.model_dump(mode="json"), dict(corpus=corpus_id, raters=raters, label=label)
    for number in range(1, max_rounds + 1):
        row = recorded.get(number)
        if row and row["status"] in evolve.FINISHED:  # done before this run: replay its outcome
            spent += row["calls"] or 0
            best = evolve.rubric_of(row) if row["status"] == "accepted" else best
            history.append(_slim(row))
            continue
        if max_calls is not None and spent >= max_calls:
            logger.info("stopping before round %s: %s judge calls spent (--max-calls %s)", number, spent, max_calls)
            break
        with db.reader(warehouse_path) as con:
            before = evolve.metric(
                con, rubric_hash=best.hash, judge_hash=judge_config.judge_hash(), texts=held_out, **where
            )
            criterion, agreement = evolve.least_agreeing(
                con, rubric_hash=best.hash, judge_hash=judge_config.judge_hash(), texts=train, **where
            )
            shown = evolve.examples(
                con,
                rubric_hash=best.hash,
                judge_hash=judge_config.judge_hash(),
                criterion=criterion,
                texts=train,
                **where,
            )
        base = dict(
            evolution=eid,
            round=number,
            parent=best.hash,
            criterion=criterion,
            metric_before=before,
            metric_after=None,
            calls=None,
            full_rescore_calls=None,
            changed_criteria=None,
            total_criteria=None,
            run_id=None,
        )
        if row is None:  # ask for mutations; a proposal recorded by a killed run is reused instead
            tried = [
                json.loads(r["mutations"])
                for r in history
                if r["status"] == "rejected" and r["parent"] == best.hash and r["criterion"] == criterion
            ]
            proposal = propose(
                reflect_config, reflect.messages(best.rubric, criterion, agreement, shown, target, tried), best
            )
            if isinstance(proposal, str):
                logger.warning("round %s: the reflection answer was refused: %s", number, proposal)
                with db.writer(warehouse_path) as con:
                    evolve.record(
                        con,
                        **base,
                        status="refused",
                        reason=proposal,
                        mutations=None,
                        candidate_hash=None,
                        candidate=None,
                    )
                history.append(_slim({**base, "status": "refused", "reason": proposal, "calls": 0, "mutations": None}))
                continue
            mutations, candidate = proposal
            row = {
                **base,
                "status": "proposed",
                "reason": None,
                "mutations": json.dumps(mutations),
                "candidate_hash": candidate.hash,
                "candidate": json.dumps(rubric_to_data(candidate.rubric)),
            }
            with db.writer(warehouse_path) as con:
                evolve.record(con, **row)
        else:
            candidate = evolve.rubric_of(row)
        path = folder / "candidates" / f"{candidate.id}@{candidate.version}-{candidate.hash[:12]}.yaml"
        path.write_text(dump_yaml(candidate.rubric), encoding="utf-8")
        notify("evolve", {"round": number, "criterion": criterion, "candidate": candidate.hash})
        run = score_corpus(corpus_id, str(path), warehouse_path, judge_fields, shard_size)
        with db.reader(warehouse_path) as con:
            after = evolve.metric(
                con, rubric_hash=candidate.hash, judge_hash=judge_config.judge_hash(), texts=held_out, **where
            )
        accepted = after is not None and (before is None or after > before + 1e-9)
        outcome = {
            **base,
            "status": "accepted" if accepted else "rejected",
            "reason": None if accepted else "the held-out agreement did not improve",
            "mutations": row["mutations"],
            "candidate_hash": candidate.hash,
            "candidate": row["candidate"],
            "metric_after": after,
            "calls": run["calls"],
            "full_rescore_calls": run["planned_cells"],
            "changed_criteria": evolve.changed(best.rubric, candidate.rubric),
            "total_criteria": len(candidate.rubric.criteria),
            "run_id": run["run_id"],
        }
        with db.writer(warehouse_path) as con:
            evolve.record(con, **outcome)
        logger.info(
            "round %s: %s %s (held-out r %s -> %s), %s judge calls",
            number,
            criterion,
            outcome["status"],
            before,
            after,
            run["calls"],
        )
        spent += run["calls"]
        spent_now += run["calls"]
        history.append(_slim(outcome))
        if accepted:
            best = candidate
    final = folder / f"{best.id}@{best.version}.yaml"
    final.write_text(dump_yaml(best.rubric), encoding="utf-8")
    return {
        "evolution_id": eid,
        "start": start.hash,
        "best": best.hash,
        "best_file": str(final),
        "first_run_calls": first["calls"],
        "rounds": history,
        "calls": spent,
        "calls_this_run": spent_now,
        "held_out_texts": len(held_out),
        "training_texts": len(train),
    }


def _slim(row: dict) -> dict:
    """A round as the flow returns it: everything but the candidate's document."""
    keep = (
        "round",
        "status",
        "reason",
        "mutations",
        "candidate_hash",
        "metric_before",
        "metric_after",
        "calls",
        "full_rescore_calls",
        "changed_criteria",
        "total_criteria",
        "run_id",
    )
    return {
        **{k: row.get(k) for k in keep},
        "criterion": row.get("criterion", row.get("criterion_id")),
        "parent": row.get("parent", row.get("parent_hash")),
    }
