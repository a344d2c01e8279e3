"""`rubric generate --from-paper`: a PaperBench requirement tree drawn from a paper (seed 003). A model
answers the tree; every leaf's `rationale_from_paper.quote` is looked up in the paper (a quote that is
not there is flagged `no_paper_evidence`); more than 20% flagged leaves asks for the tree again, with
the quotes that failed, a bounded number of times. The result is the seed's envelope (version 3,
paper and rubric sha256, generator), checked against its JSON Schema."""

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
            "id": {"type": "string", "format": "uuid"},
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
            "required": ["model", "prompt_sha256", "generated_at"],
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


def messages(paper: str, venue: str | dict, failed: Sequence[str] = ()) -> list[dict]:
    """The request; the venue template's `system_hint` and `leaf_style` take the seed's {VENUE_HINT} places."""
    template = load_venue(venue) if isinstance(venue, str) else venue
    axes = "".join(
        f"\n- {a['id']}: {a.get('name') or a['id']} (weight {a['weight']})"
        + (f"\n  {' '.join(str(a['description']).split())}" if a.get("description") else "")
        for a in template["top_level_axes"]
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


def _with_ids(node: dict, path: str = "root") -> dict:
    """Ids the tree is stable under: uuid5 of the node's place, whatever the model wrote."""
    children = [_with_ids(c, f"{path}/{i}") for i, c in enumerate(node.get("sub_tasks") or [])]
    return {**node, "id": str(uuid.uuid5(uuid.NAMESPACE_URL, path)), "sub_tasks": children}


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
    return _with_ids(root)


def generate(config: JudgeConfig, paper_path: Path, venue: str, max_rounds: int = 3) -> PaperRubric:
    """Ask for the tree until at most 20% of its leaves are flagged (or `max_rounds` are spent: the last
    tree is kept, its flags say which quotes failed); the envelope is validated before it is returned."""
    template = load_venue(venue)  # a data file (tasks/improve/venues.py): checked before the paper is read
    try:
        paper = paper_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{paper_path}: cannot be read as UTF-8 text: {exc}") from None
    failed: list[str] = []
    tree: dict = {}
    rounds = 0
    while rounds < max_rounds and (rounds == 0 or len(failed) > MAX_FLAGGED * len(leaves(tree))):
        rounds += 1
        msgs = messages(paper, template, failed)
        tree = _tree(ask(config, msgs))
        failed = check_quotes(tree, paper)
    result = envelope(tree, paper, config.model, msgs)
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(result), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
        raise PaperRubricError(f"{paper_path}: the tree fails the PaperBench schema at {where}: {errors[0].message}")
    return PaperRubric(result, rounds, len(failed), len(leaves(tree)))
