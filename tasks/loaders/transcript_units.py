"""A scoped criterion's units of a transcript (#51 item 2): each turn, step, tool call or the final
message it judges, as the text the judge reads for that unit alone.

Why a text per unit: a turn-scoped criterion is judged once per matching unit; written as a text
(the unit's messages after a few messages of context, headed by which message to judge) it goes
through the scoring pipeline as any text does, its evidence citing the unit's message ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from rubricflow.rubrics.model import Criterion, LongTranscripts
from rubricflow.tasks.loaders.transcripts import render_message

CONTEXT_MESSAGES = 6  # messages before a unit shown as its context
CHARS_PER_TOKEN = 4  # a transcript's length against the judge's context, as the cost estimate counts
NOTE_CHARS = 100  # a segment's first line, saying which segment it is


@dataclass(frozen=True)
class Unit:
    transcript_id: str
    criterion_id: str
    position: int  # the unit's (first) message
    text: str
    part: str = "unit"  # scope segments: whole, segment, last_turns or tool_calls (a long transcript cut)
    call: int | None = None  # a tool call's number in a message that makes several (1-based)

    @property
    def unit_id(self) -> str:
        """Its text id: parallel calls of one message are apart (one id for both kept one unit of the two)."""
        suffix = f".{self.call}" if self.call is not None else ""
        return f"{self.transcript_id}#{self.criterion_id}#M{self.position}{suffix}"


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
        links = answered(messages)  # once a transcript, not once a message
        units = [_step(links, m) for m in messages if m["role"] == "assistant"]
    elif criterion.scope == "tool_call":
        units = [positions for positions, _ in _tool_calls(messages, select.tool if select else None)]
    return _selected(units, criterion)


def _selected(units: list, criterion: Criterion) -> list:
    """The unit the criterion's `select.position` names (first, last, an index), else all."""
    position = criterion.select.position if criterion.select else None
    if position is None or not units:
        return units
    index = position if isinstance(position, int) else {"first": 0, "last": -1}[position]
    return [units[index]] if -len(units) <= index < len(units) else []


def answered(messages: list[dict]) -> dict[int, tuple[int, dict]]:
    """Each tool result's position -> the message and the call it answers: the latest call before it
    with its id, as the rendering names it (a server that numbers each turn's calls from `call_0`
    uses an id again; a result answers the call just made, not an earlier one)."""
    latest: dict[str, tuple[int, dict]] = {}
    out: dict[int, tuple[int, dict]] = {}
    for m in messages:
        link = m.get("tool_call_id")
        if link is not None and link in latest:
            out[m["position"]] = latest[link]
        for call in m.get("tool_calls") or []:
            if call.get("id") is not None:
                latest[call["id"]] = (m["position"], call)
    return out


def _step(links: dict[int, tuple[int, dict]], message: dict) -> list[int]:
    """An assistant message and the tool results answering its calls (`links`: `answered`'s)."""
    return [message["position"], *(p for p, (at, _) in links.items() if at == message["position"])]


def _tool_calls(messages: list[dict], tool: str | None) -> list[tuple[list[int], tuple[int, int, dict] | None]]:
    """Each call (of `tool`, when named): its message and its result's (the first that answers it),
    and, in a message making several, (its number, how many, the call): its unit says which it is."""
    first: dict[int, int] = {}  # id() of a call -> the position of its first result
    for position, (_, call) in answered(messages).items():
        first.setdefault(id(call), position)
    out = []
    for m in messages:
        calls = m.get("tool_calls") or []
        for k, call in enumerate(calls, start=1):
            if tool is None or call.get("name") == tool:
                result = [first[id(call)]] if id(call) in first else []
                out.append(([m["position"], *result], (k, len(calls), call) if len(calls) > 1 else None))
    return out


def transcript_units(
    transcript_id: str, messages: list[dict], criterion: Criterion, long: LongTranscripts | None = None
) -> list[Unit]:
    """The criterion's units of one transcript (`messages` ordered by position, as the `messages`
    view gives them: role, content, tool_calls as {id, name, arguments}, tool_call_id); `long`, the
    rubric's long_transcripts, cuts a `segments`-scoped criterion's."""
    links = answered(messages)
    blocks = {
        m["position"]: render_message(
            m["position"],
            m["role"],
            m.get("content") or "",
            m.get("tool_calls") or [],
            m.get("tool_call_id"),
            {m["tool_call_id"]: links[m["position"]][1]["name"]} if m["position"] in links else {},
            bool(m.get("is_error")),
        )
        for m in messages
    }
    if criterion.scope == "segments" and long is not None:
        return [
            Unit(transcript_id, criterion.id, first, text, part)
            for first, text, part in segments(messages, blocks, long)
        ]
    tool = criterion.select.tool if criterion.select else None
    calls = _selected(_tool_calls(messages, tool), criterion) if criterion.scope == "tool_call" else []
    units = []
    for n, judged in enumerate(unit_positions(messages, criterion)):
        first, which = judged[0], calls[n][1] if calls else None
        context = [blocks[p] for p in sorted(blocks) if first - CONTEXT_MESSAGES <= p < first]
        parts = [_head(criterion, judged, which), *(["Context:", *context] if context else []), "Judged:"]
        parts += [blocks[p] for p in judged]
        units.append(Unit(transcript_id, criterion.id, first, "\n".join(parts), call=which[0] if which else None))
    return units


def _head(criterion: Criterion, judged: list[int], which: tuple[int, int, dict] | None) -> str:
    """What the judge judges: the unit's messages; of a message making several calls, which call."""
    named = f" (call {which[0]} of {which[1]}: {which[2].get('name')} #{which[2].get('id') or ''})" if which else ""
    ids = ", ".join([f"M{judged[0]}{named}", *(f"M{p}" for p in judged[1:])])
    return f"Judge only {criterion.scope.replace('_', ' ')} {ids}; the messages before it are context."


def turns_of(messages: list[dict]) -> tuple[list[int], list[list[int]]]:
    """(the head: the messages before the first user message, the turns: each user message and
    what follows it up to the next); a transcript with no user message is one turn per message."""
    starts = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if not starts:
        return [], [[m["position"]] for m in messages]
    bounds = [*starts, len(messages)]
    turns = [[m["position"] for m in messages[a:b]] for a, b in zip(bounds, bounds[1:], strict=False)]
    return [m["position"] for m in messages[: starts[0]]], turns


def segments(messages: list[dict], blocks: dict[int, str], long: LongTranscripts) -> list[tuple[int, str, str]]:
    """(first message, text, part) of each unit a long transcript is judged in: the whole transcript
    when it fits the context, else its segments of whole turns, or the stated view."""
    room = long.context_tokens * CHARS_PER_TOKEN
    whole = "\n".join(blocks[m["position"]] for m in messages)
    if len(whole) <= room:
        return [(messages[0]["position"], whole, "whole")]
    head, turns = turns_of(messages)
    if long.mode == "last_turns":
        kept = [p for turn in turns[-long.last_turns :] for p in turn]
        return [(kept[0], _view(head, kept, blocks, f"its last {long.last_turns} turn(s)"), "last_turns")]
    if long.mode == "tool_calls":
        calls = [m["position"] for m in messages if m.get("tool_calls") or m.get("tool_call_id")]
        kept = calls or [messages[-1]["position"]]  # none: the last message, so the judge reads something
        return [(kept[0], _view(head, kept, blocks, "its tool calls and their results"), "tool_calls")]
    room -= NOTE_CHARS + sum(len(blocks[p]) + 1 for p in head)  # every segment repeats the head
    spans = turn_spans([sum(len(blocks[p]) + 1 for p in turn) for turn in turns], room, long.overlap_turns)
    out = []
    for k, (a, b) in enumerate(spans, start=1):
        kept = [p for turn in turns[a:b] for p in turn]
        note = f"segment {k} of {len(spans)}, messages M{kept[0]} to M{kept[-1]}"
        if k > 1 and long.overlap_turns:
            note += f"; its first {min(long.overlap_turns, b - a - 1)} turn(s) end the segment before"
        out.append((kept[0], _view(head, kept, blocks, note), "segment"))
    return out


def turn_spans(sizes: list[int], room: int, overlap: int) -> list[tuple[int, int]]:
    """[start, end) of each segment: as many whole turns as fit `room` (at least one new turn
    each), each after the first starting `overlap` turns before the last one's end."""
    spans: list[tuple[int, int]] = []
    start, done = 0, 0
    while done < len(sizes):
        end, size = start, 0
        while end < len(sizes) and (end <= done or size + sizes[end] <= room):
            size, end = size + sizes[end], end + 1
        spans.append((start, end))
        done, start = end, max(end - overlap, start + 1)
    return spans


def _view(head: list[int], kept: list[int], blocks: dict[int, str], what: str) -> str:
    """A cut of a long transcript as the judge reads it: what it is, the head, the kept messages."""
    lines = [f"A transcript too long to judge whole: judge {what}."]
    lines += [blocks[p] for p in head if p not in kept] + [blocks[p] for p in kept]
    return "\n".join(lines)
