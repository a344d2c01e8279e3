"""A scoped criterion's units of a transcript (#51 item 2): each turn, step, tool call or the final
message it judges, as the text the judge reads for that unit alone.

Why a text per unit: a turn-scoped criterion is judged once per matching unit; written as a text
(the unit's messages after a few messages of context, headed by which message to judge) it goes
through the scoring pipeline as any text does, its evidence citing the unit's message ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from rubricflow.rubrics.model import Criterion
from rubricflow.tasks.loaders.transcripts import render_message

CONTEXT_MESSAGES = 6  # messages before a unit shown as its context


@dataclass(frozen=True)
class Unit:
    transcript_id: str
    criterion_id: str
    position: int  # the unit's (first) message
    text: str

    @property
    def unit_id(self) -> str:
        return f"{self.transcript_id}#{self.criterion_id}#M{self.position}"


def unit_positions(messages: list[dict], criterion: Criterion) -> list[list[int]]:
    """The message positions of each unit the criterion judges, in order, its selector applied."""
    select = criterion.select
    units: list[list[int]] = []
    if criterion.scope == "final":
        last = [m["position"] for m in messages if m["role"] == "assistant"]
        units = [last[-1:]] if last else []
    elif criterion.scope == "turn":
        role = select.role if select and select.role else "assistant"
        units = [[m["position"]] for m in messages if m["role"] == role]
    elif criterion.scope == "step":
        units = [_step(messages, m) for m in messages if m["role"] == "assistant"]
    elif criterion.scope == "tool_call":
        units = _tool_calls(messages, select.tool if select else None)
    position = select.position if select else None
    if position is None or not units:
        return units
    index = position if isinstance(position, int) else {"first": 0, "last": -1}[position]
    return [units[index]] if -len(units) <= index < len(units) else []


def _step(messages: list[dict], message: dict) -> list[int]:
    """An assistant message and the tool results answering its calls."""
    ids = {c["id"] for c in message.get("tool_calls") or [] if c.get("id")}
    return [message["position"], *(m["position"] for m in messages if m.get("tool_call_id") in ids)]


def _tool_calls(messages: list[dict], tool: str | None) -> list[list[int]]:
    """Each call (of `tool`, when named): its message and its result's."""
    out = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            if tool is None or call.get("name") == tool:
                result = [r["position"] for r in messages if call.get("id") and r.get("tool_call_id") == call["id"]]
                out.append([m["position"], *result[:1]])
    return out


def transcript_units(transcript_id: str, messages: list[dict], criterion: Criterion) -> list[Unit]:
    """The criterion's units of one transcript (`messages` ordered by position, as the `messages`
    view gives them: role, content, tool_calls as {id, name, arguments}, tool_call_id)."""
    names = {c["id"]: c["name"] for m in messages for c in m.get("tool_calls") or [] if c.get("id")}
    blocks = {
        m["position"]: render_message(
            m["position"], m["role"], m.get("content") or "", m.get("tool_calls") or [], m.get("tool_call_id"), names
        )
        for m in messages
    }
    units = []
    for positions in unit_positions(messages, criterion):
        first = positions[0]
        context = [blocks[p] for p in sorted(blocks) if first - CONTEXT_MESSAGES <= p < first]
        judged = [blocks[p] for p in positions]
        ids = ", ".join(f"M{p}" for p in positions)
        head = f"Judge only {criterion.scope.replace('_', ' ')} {ids}; the messages before it are context."
        parts = [head, *(["Context:", *context] if context else []), "Judged:", *judged]
        units.append(Unit(transcript_id, criterion.id, first, "\n".join(parts)))
    return units
