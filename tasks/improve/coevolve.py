"""Co-evolution for `improve evolve --co-evolve` (rubrify's evolve_rubric_v3): besides the target
rubric, three meta-components of the search evolve in the same loop, one component per round in
turn (round-robin):

- `gate`: the proposal quality gate, the lattice validator rubrics that judge a proposal before it
  is scored (which properties it judges, and how far, in unit score, a property may fall);
- `reflection`: the template of the reflection prompt (the guidance the reflection model follows;
  the answer's schema stays fixed, so a template cannot break the answer's contract);
- `acceptance`: the acceptance parameters, each objective's tolerance.

A meta round asks the reflection model for a new value of its component, shown the rounds so far.
It costs no judge call: a meta-component changes the search, not the target's score, so it is
accepted on non-degradation (lenient): within generous bounds, and unless, under it, a target round
this evolution accepted would have been refused (its recorded validation figures replayed through the
new tolerances, its parent and candidate through the new gate). The test split is never read here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb

from rubricflow.rubrics.model import Rubric
from rubricflow.tasks.improve import lattice, objectives
from rubricflow.tasks.improve.objectives import Objectives
from rubricflow.tasks.improve.reflect import GUIDANCE, ReflectionRefused
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.prompts import COEVOLVE_MARK
from rubricflow.tasks.judging.verify import AnswerError, parse_json_answer
from rubricflow.warehouse import db
from rubricflow.warehouse.sqlfiles import run_sql

COMPONENTS = ("target", "gate", "reflection", "acceptance")
MAX_TOLERANCE = 0.1  # the lenient bounds: how far any objective may be allowed to fall
MAX_SLACK = 0.25  # how far (unit score) the gate may let a lattice property fall
MAX_TEMPLATE_CHARS = 2000


@dataclass
class Meta:
    """The meta-components in force: what a target round is proposed, screened and accepted with."""

    gate: dict = field(default_factory=lambda: {"properties": list(lattice.BY_ID), "slack": 0.0})
    template: str = GUIDANCE
    acceptance: dict[str, float] = field(default_factory=dict)

    def value(self, component: str) -> object:
        return {"gate": self.gate, "reflection": self.template, "acceptance": self.acceptance}[component]

    def adopt(self, component: str, value) -> None:
        if component == "gate":
            self.gate = value
        elif component == "reflection":
            self.template = value
        else:
            self.acceptance = value

    def as_data(self) -> dict:
        data = asdict(self)
        return {"gate_rubric": data["gate"], "reflection_template": data["template"], "acceptance": data["acceptance"]}


def components(gate: bool) -> tuple[str, ...]:
    """The components that take turns: the gate only where there is one (--gate)."""
    return tuple(c for c in COMPONENTS if gate or c != "gate")


def component(number: int, turns: tuple[str, ...]) -> str:
    """Round-robin: round 1 is the target's, then each meta-component in turn."""
    return turns[(number - 1) % len(turns)]


def messages(name: str, current: object, history: list[dict], weights: dict[str, float]) -> list[dict]:
    """Ask for a new value of one meta-component, shown the rounds so far and why each ended as it did."""
    shapes = {
        "gate": f'{{"properties": [some of {", ".join(lattice.BY_ID)}], "slack": 0 to {MAX_SLACK}}}',
        "reflection": f"the guidance text, at most {MAX_TEMPLATE_CHARS} characters",
        "acceptance": f'{{"OBJECTIVE": tolerance 0 to {MAX_TOLERANCE}, ...}}',
    }
    system = (
        f"{COEVOLVE_MARK}: the {name} component. Its value steers which proposals are made, screened or kept; "
        "change it so that the next rounds find better rubrics. Answer one JSON object "
        f'{{"value": ...}}, where value is {shapes[name]}.'
    )
    lines = [f"## Component: {name}", f"## Objectives: {', '.join(weights)}", "## Current value", json.dumps(current)]
    lines.append("## Rounds so far")
    lines += [f"- round {r['round']} ({r['component']}): {r['status']}: {r.get('reason') or ''}" for r in history]
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def parse(name: str, content: str | None, current: object) -> object:
    """The proposed value, checked against the lenient bounds; ReflectionRefused says why not."""
    try:
        answer = parse_json_answer(content)
    except AnswerError as exc:
        raise ReflectionRefused(f"not JSON: {exc}") from None
    if not isinstance(answer, dict) or "value" not in answer:
        raise ReflectionRefused('expected {"value": ...}')
    value = answer["value"]
    if name == "gate":
        value = _gate(value)
    elif name == "reflection":
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEMPLATE_CHARS:
            raise ReflectionRefused(f"a reflection template is a text of 1 to {MAX_TEMPLATE_CHARS} characters")
    else:
        value = _tolerances(value)
    if value == current:
        raise ReflectionRefused(f"the proposed {name} changes nothing")
    return value


def _gate(value: object) -> dict:
    props = value.get("properties") if isinstance(value, dict) else None
    slack = value.get("slack", 0.0) if isinstance(value, dict) else None
    if not isinstance(props, list) or not props or not set(props) <= set(lattice.BY_ID):
        raise ReflectionRefused(f"a gate names 1 or more lattice properties of {', '.join(lattice.BY_ID)}")
    if not isinstance(slack, int | float) or not 0 <= slack <= MAX_SLACK:
        raise ReflectionRefused(f"a gate's slack is a number from 0 to {MAX_SLACK}")
    return {"properties": [p for p in lattice.BY_ID if p in props], "slack": float(slack)}


def _tolerances(value: object) -> dict[str, float]:
    if not isinstance(value, dict) or not all(isinstance(v, int | float) for v in value.values()):
        raise ReflectionRefused("acceptance parameters are {OBJECTIVE: tolerance}")
    unknown = sorted(set(value) - set(objectives.NAMES))
    if unknown or not all(0 <= v <= MAX_TOLERANCE for v in value.values()):
        raise ReflectionRefused(
            f"tolerances are 0 to {MAX_TOLERANCE} for {', '.join(objectives.NAMES)}"
            + (f" (not {unknown})" * bool(unknown))
        )
    return {k: float(v) for k, v in sorted(value.items())}


def gate_refusal(parent: Rubric, child: Rubric, gate: dict, config: JudgeConfig, journal_path: Path) -> str | None:
    """None if the gate lets `child` be scored: no property it judges falls by more than its slack
    (judgments journaled, so a property judged once for a rubric is never bought again)."""
    from rubricflow.tasks.improve import refine

    journal = refine.Journal(journal_path)
    props = tuple(gate["properties"])
    before = refine.measure(parent, config, journal, props)
    after = refine.measure(child, config, journal, props)
    fallen = [
        f"{p} ({before[p].value} -> {after[p].value})"
        for p in props
        if after[p].unit < before[p].unit - gate["slack"] - objectives.NOISE
    ]
    return ("the proposal gate refused it: it lowers " + ", ".join(fallen)) if fallen else None


@dataclass(frozen=True)
class Accepted:
    """A target round this evolution accepted: its parent and candidate, and their validation figures."""

    round: int
    parent: Rubric
    child: Rubric
    before: objectives.Values
    after: objectives.Values


def degradation(
    name: str,
    value,
    accepted: list[Accepted],
    settings: Objectives,
    screen: Callable[[Rubric, Rubric, dict], str | None],
) -> str | None:
    """None if `value` undoes none of the accepted rounds (non-degradation); else the round it would have refused."""
    for a in accepted:
        if name == "acceptance":
            why = objectives.refusal(a.before, a.after, Objectives(settings.weights, settings.select, value))
        elif name == "gate":
            why = screen(a.parent, a.child, value)
        else:  # a template steers what is proposed, not what is kept: it can undo no accepted round
            why = None
        if why:
            return f"under it, accepted round {a.round} would have been refused: {why}"
    return None


def recorded(con: duckdb.DuckDBPyConnection, evolution: str) -> dict[int, dict]:
    return {r["round"]: r for r in db.fetch(con, "evolution_components.sql", evolution=evolution)}


def record(con: duckdb.DuckDBPyConnection, **row) -> None:
    """Insert or update one meta round (see evolution_components in 001_schema.sql)."""
    run_sql(con, "record_component.sql", **row)
