"""The meta rounds of `improve evolve --co-evolve` (flows/evolve.py runs them in turn with the target
rounds; the rules are tasks/improve/coevolve.py's): ask the reflection model for a new value of one
meta-component, record it before it is decided (a killed run decides the recorded value, asking
nothing again), and adopt it unless it would have refused a round the evolution accepted. A meta
round costs no judge call and reads only validation figures, never the test split."""

import json

from prefect import task
from prefect.cache_policies import NO_CACHE

from rubricflow.rubrics.model import Rubric
from rubricflow.tasks.improve import coevolve
from rubricflow.tasks.improve.objectives import Objectives
from rubricflow.tasks.improve.reflect import ReflectionRefused
from rubricflow.tasks.judging.chat import ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.verify import AnswerError

DONE = ("accepted", "refused")


@task(name="propose-meta-component", cache_policy=NO_CACHE)
def propose(reflect_config: JudgeConfig, name: str, messages: list[dict], current: object) -> dict | str:
    """The proposed value, or why the answer was refused (a string: an expected outcome, not a failed task)."""
    try:
        return {"value": coevolve.parse(name, ask(reflect_config, messages), current)}
    except ReflectionRefused as exc:
        return str(exc)
    except AnswerError as exc:
        return f"the reflection model's answer was unusable ({exc.kind}): {exc}"


def adopt(ev, name: str, value) -> None:
    """The value in force from now on; new tolerances decide the next target rounds."""
    ev.meta.adopt(name, value)
    if name == "acceptance":
        ev.settings = Objectives(ev.settings.weights, ev.settings.select, value)


def meta_round(ev, number: int, name: str, logger) -> None:
    """One meta round: replayed if decided before, else proposed (or the recorded proposal), decided, recorded."""
    row = ev.meta_rows.get(number)
    if row and row["status"] in DONE:
        if row["status"] == "accepted":
            adopt(ev, name, json.loads(row["value"]))
        ev.meta_history.append(_slim(row))
        return
    before = ev.meta.value(name)
    base = dict(evolution=ev.eid, round=number, component=name, value_before=json.dumps(before))
    if row is None:
        asked = coevolve.messages(name, before, _rounds_so_far(ev), ev.settings.weights)
        proposal = propose(ev.reflect_config, name, asked, before)
        if isinstance(proposal, str):
            _record(ev, {**base, "status": "refused", "reason": proposal, "value": None}, logger)
            return
        value = proposal["value"]
        ev.store.execute_write_fn(coevolve.record, **base, status="proposed", reason=None, value=json.dumps(value))
    else:
        value = json.loads(row["value"])
    why = coevolve.degradation(name, value, accepted_rounds(ev), ev.settings, lambda p, c, g: _gate(ev, p, c, g))
    _record(ev, {**base, "status": "refused" if why else "accepted", "reason": why, "value": json.dumps(value)}, logger)
    if why is None:
        adopt(ev, name, value)


def _gate(ev, parent: Rubric, child: Rubric, gate: dict) -> str | None:
    return coevolve.gate_refusal(parent, child, gate, ev.reflect_config, ev.folder / ".gate.jsonl")


def _record(ev, row: dict, logger) -> None:
    ev.store.execute_write_fn(coevolve.record, **row)
    logger.info("round %s (%s): %s %s", row["round"], row["component"], row["status"], row["reason"] or "")
    ev.meta_history.append(_slim({**row, "evolution_id": row["evolution"]}))


def accepted_rounds(ev) -> list[coevolve.Accepted]:
    """The target rounds accepted so far, with their parents, candidates and validation figures."""
    return [
        coevolve.Accepted(
            r["round"],
            ev.versions[r["parent"]],
            ev.versions[r["candidate_hash"]],
            ev.point(r["parent"]),
            ev.point(r["candidate_hash"]),
        )
        for r in ev.history
        if r["status"] == "accepted"
    ]


def _rounds_so_far(ev) -> list[dict]:
    target = [{**r, "component": "target"} for r in ev.history]
    return sorted(target + ev.meta_history, key=lambda r: r["round"])


def _slim(row: dict) -> dict:
    """A meta round as the flow returns it (the values decoded)."""
    return {
        "round": row["round"],
        "component": row["component"],
        "status": row["status"],
        "reason": row["reason"],
        "value_before": json.loads(row["value_before"]),
        "value": None if row["value"] is None else json.loads(row["value"]),
    }
