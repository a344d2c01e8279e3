"""`rubric generate --from-paper`: a PaperBench requirement tree drawn from a paper (seed 003). A model
answers the tree; every leaf's `rationale_from_paper.quote` is looked up in the paper (a quote that is
not there is flagged `no_paper_evidence`); more than 20% flagged leaves asks for the tree again, with
the quotes that failed, a bounded number of times. A `paper_audit` venue is generated in two stages:
the root's children are the template's `top_level_axes` as written, and the model drafts each axis'
subtree (seed 003: paper_audit requires two_stage; single pass is refused). The result is the seed's
envelope (version 3, paper and rubric sha256, generator), checked against its JSON Schema."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import FLAGGED_SHARE
from rubricflow.rubrics.importers.paperbench import FINEGRAINED_CATEGORIES as FINEGRAINED
from rubricflow.rubrics.importers.paperbench import FLAGS
from rubricflow.rubrics.importers.paperbench import TASK_CATEGORIES as CATEGORIES
from rubricflow.rubrics.importers.replication_schema import UUID4_PATTERN
from rubricflow.rubrics.render import fence_tag
from rubricflow.tasks.improve.venues import load_venue
from rubricflow.tasks.judging.chat import ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.prompts import PAPER_MARK
from rubricflow.tasks.judging.verify import AnswerError, parse_json_answer

# Seed 003's closed vocabularies and its regeneration rule: one source, the PaperBench importer and the compiler.
MAX_FLAGGED = FLAGGED_SHARE
PAPER_CHARS = 80_000


class PaperRubricError(InputError):
    """The model's trees did not become a valid PaperBench rubric."""


def _node_schema() -> dict:
    leaf_only = {
        "task_category": {"enum": list(CATEGORIES)},
        "finegrained_task_category": {"enum": list(FINEGRAINED)},
        "rationale_from_paper": {
            "type": "object",
            "properties": {"section": {"type": "string"}, "quote": {"type": "string", "minLength": 10}},
            "required": ["section", "quote"],
        },
    }
    return {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": UUID4_PATTERN},
            "requirements": {"type": "string", "minLength": 10},
            "weight": {"type": "number", "exclusiveMinimum": 0},
            "sub_tasks": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            "flags": {"type": "array", "items": {"enum": list(FLAGS)}},
            **leaf_only,
        },
        "required": ["id", "requirements", "weight", "sub_tasks"],
        "if": {"properties": {"sub_tasks": {"maxItems": 0}}},
        "then": {"required": list(leaf_only)},
        "else": {"not": {"anyOf": [{"required": [k]} for k in leaf_only]}},
    }


SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "version": {"const": "3"},
        "paper_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "rubric_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "generator": {
            "type": "object",
            "properties": {"model": {"type": "string"}, "prompt_sha256": {"type": "string"}},
            "required": ["model", "prompt_sha256", "generated_at", "temperature", "seed"],
        },
        "reproduce_contract": {
            "type": "object",
            "properties": {
                "script_path": {"const": "reproduce.sh"},
                "max_runtime_sec": {"type": "integer", "minimum": 60, "maximum": 43200},
                "expected_artifacts": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["script_path", "max_runtime_sec", "expected_artifacts"],
        },
        "rubric": {"$ref": "#/$defs/node"},
    },
    "required": ["version", "paper_sha256", "rubric_sha256", "generator", "reproduce_contract", "rubric"],
    "$defs": {"node": _node_schema()},
}


def messages(paper: str, venue: str | dict, failed: Sequence[str] = (), axis: int | None = None) -> list[dict]:
    """The request; the venue template's `system_hint` and `leaf_style` take the seed's {VENUE_HINT} places.
    With `axis` (a paper_audit's second stage), the request is for that one axis' subtree."""
    template = load_venue(venue) if isinstance(venue, str) else venue
    every = template["top_level_axes"]
    axes = "".join(
        f"\n- {a['id']}: {a.get('name') or a['id']} (weight {a['weight']})"
        + (f"\n  {' '.join(str(a['description']).split())}" if a.get("description") else "")
        for a in (every if axis is None else [every[axis]])
    )
    if axis is not None:
        axes += (
            f"\nThis request drafts audit axis {axis + 1} of {len(every)} only: ROOT stands for the axis above "
            "(its requirements and weight are the template's); put the nodes that audit it in ROOT's sub_tasks."
        )
    hints = template["prompt_overrides"]
    leaf_style = " ".join(str(hints.get("leaf_style") or "").split())
    system = (
        f'{PAPER_MARK} as a PaperBench requirement tree, one JSON object {{"rubric": ROOT}}. A node has '
        "requirements (a definite, verifiable claim), weight, sub_tasks (empty for a leaf). Every leaf has "
        f"task_category (one of {', '.join(CATEGORIES)}), finegrained_task_category (one of "
        f"{', '.join(FINEGRAINED)}) and rationale_from_paper {{section, quote}}: the quote copied VERBATIM "
        f"from the paper. {leaf_style + ' ' if leaf_style else ''}"
        f"Venue: {template.get('venue') or template['id']} ({template['mode']}). "
        f"{' '.join(str(hints['system_hint']).split())}{axes}"
    )
    tag = fence_tag(paper)
    user = f"<<<BEGIN PAPER {tag}>>>\n{paper[:PAPER_CHARS]}\n<<<END PAPER {tag}>>>"
    if failed:
        user += "\n\nThese quotes of your last tree are not in the paper; quote the paper verbatim:\n"
        user += "\n".join(f"- {q}" for q in failed)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _flat(text: str) -> str:
    return " ".join(text.split()).lower()


def leaves(node: dict) -> list[dict]:
    children = node.get("sub_tasks") or []
    return [node] if not children else [leaf for c in children for leaf in leaves(c)]


def check_quotes(tree: dict, paper: str) -> list[str]:
    """Flag every leaf whose quote is not in the paper (whitespace and case aside); the failed quotes."""
    body, failed = _flat(paper), []
    for leaf in leaves(tree):
        quote = str((leaf.get("rationale_from_paper") or {}).get("quote", ""))
        flags = [f for f in leaf.get("flags", []) if f != "no_paper_evidence"]
        if not quote.strip() or _flat(quote) not in body:
            flags.append("no_paper_evidence")
            failed.append(quote)
        leaf["flags"] = flags
    return failed


def node_id(place: str) -> str:
    """A uuid v4 (seed 003: `"id": "<uuid v4>"`) drawn from a hash of the node's place, not from a random
    source: the same tree gets the same ids on every run."""
    return str(uuid.UUID(bytes=hashlib.sha256(place.encode()).digest()[:16], version=4))


def _with_ids(node: dict, path: str = "root") -> dict:
    """Ids the tree is stable under: one per place in the tree, whatever the model wrote."""
    children = [_with_ids(c, f"{path}/{i}") for i, c in enumerate(node.get("sub_tasks") or [])]
    return {**node, "id": node_id(path), "sub_tasks": children}


@dataclass
class PaperRubric:
    envelope: dict
    rounds: int
    flagged: int
    leaves: int


def envelope(tree: dict, paper: str, model: str, msgs: list[dict]) -> dict:
    """The seed's envelope; rubric_sha256 is over the canonical JSON without itself (and without `audit`)."""
    out = {
        "version": "3",
        "paper_sha256": hashlib.sha256(paper.encode()).hexdigest(),
        "generator": {
            "model": model,
            "prompt_sha256": hashlib.sha256(json.dumps(msgs, sort_keys=True).encode()).hexdigest(),
            "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "temperature": 0.0,
            "seed": 0,
        },
        "reproduce_contract": {"script_path": "reproduce.sh", "max_runtime_sec": 21600, "expected_artifacts": []},
        "rubric": tree,
    }
    canonical = json.dumps(out, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {**out, "rubric_sha256": hashlib.sha256(canonical.encode()).hexdigest()}


def _tree(content: str | None) -> dict:
    try:
        answer = parse_json_answer(content)
    except AnswerError as exc:
        raise PaperRubricError(f"the model's tree is not JSON: {exc}") from None
    root = answer.get("rubric") if isinstance(answer, dict) else None
    if not isinstance(root, dict):
        raise PaperRubricError('the model\'s answer has no {"rubric": ROOT} object')
    return root


@dataclass
class Drafted:
    """A tree as the model last answered it, the quotes of it not in the paper, and what it took."""

    tree: dict
    failed: list[str]
    rounds: int
    asked: list[dict]


def _draft(config: JudgeConfig, paper: str, template: dict, max_rounds: int, axis: int | None = None) -> Drafted:
    """Ask for the tree (or one axis' subtree) until at most 20% of its leaves are flagged, or
    `max_rounds` are spent: the last tree is kept, its flags say which quotes failed."""
    drafted = Drafted({}, [], 0, [])
    while drafted.rounds < max_rounds and (
        drafted.rounds == 0 or len(drafted.failed) > MAX_FLAGGED * len(leaves(drafted.tree))
    ):
        drafted.rounds += 1
        drafted.asked = messages(paper, template, drafted.failed, axis)
        drafted.tree = _tree(ask(config, drafted.asked))
        drafted.failed = check_quotes(drafted.tree, paper)
    return drafted


def axis_requirements(axis: dict) -> str:
    """An audit axis as its node's claim: its name, then its description, which the seed says "drops into
    the rubric tree"."""
    return f"{axis['name']}: {' '.join(str(axis['description']).split())}"


def _audit_tree(config: JudgeConfig, paper: str, template: dict, max_rounds: int) -> Drafted:
    """Seed 003's two stages for a paper_audit venue: the root's children are the template's axes as
    written (an id drawn from the axis' id, its name and description, its weight), whatever the model
    says; the model drafts each axis' subtree, asked again for its own failed quotes."""
    children, failed, rounds, asked = [], [], 0, []
    for i, axis in enumerate(template["top_level_axes"]):
        drafted = _draft(config, paper, template, max_rounds, axis=i)
        node = {**drafted.tree, "requirements": axis_requirements(axis), "weight": axis["weight"]}
        children.append(_with_ids(node, f"root/{axis['id']}"))
        failed += drafted.failed
        rounds = max(rounds, drafted.rounds)
        asked += drafted.asked
    venue = template.get("venue") or template["id"]
    claim = f"The paper passes the {venue} reproducibility audit on its {len(children)} axes."
    root = {"id": node_id("root"), "requirements": claim, "weight": 1, "sub_tasks": children}
    return Drafted(root, failed, rounds, asked)


def _paper_text(paper_path: Path) -> str:
    try:
        return paper_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{paper_path}: cannot be read as UTF-8 text: {exc}") from None


def _check_stages(template: dict, two_stage: bool) -> None:
    """Seed 003: "paper_audit mode requires two_stage=True"; the second stage drafts the axes' subtrees,
    so an agent_benchmark venue (no axes) has no two-stage path here."""
    audit = template["mode"] == "paper_audit"
    if audit and not two_stage:
        raise PaperRubricError(
            f"paper_audit template {template['id']!r} requires two_stage=True (single-pass skeleton+leaves "
            "cannot honour the fixed-axis constraint)"
        )
    if two_stage and not audit:
        raise PaperRubricError(
            f"two_stage=True drafts a paper_audit template's axes; {template['id']!r} is {template['mode']}"
        )


def generate(
    config: JudgeConfig, paper_path: Path, venue: str, max_rounds: int = 3, two_stage: bool | None = None
) -> PaperRubric:
    """The tree of the paper for the venue: two stages for a paper_audit venue (the default there), one
    request per round otherwise; the envelope is validated before it is returned."""
    template = load_venue(venue)  # a data file (tasks/improve/venues.py): checked before the paper is read
    _check_stages(template, template["mode"] == "paper_audit" if two_stage is None else two_stage)
    paper = _paper_text(paper_path)
    if template["mode"] == "paper_audit":
        drafted = _audit_tree(config, paper, template, max_rounds)
    else:
        drafted = _draft(config, paper, template, max_rounds)
        drafted.tree = _with_ids(drafted.tree)
    result = envelope(drafted.tree, paper, config.model, drafted.asked)
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(result), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
        raise PaperRubricError(f"{paper_path}: the tree fails the PaperBench schema at {where}: {errors[0].message}")
    return PaperRubric(result, drafted.rounds, len(drafted.failed), len(leaves(drafted.tree)))
