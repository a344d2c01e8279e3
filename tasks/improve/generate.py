"""Draft a rubric from a source document (a style guide, a book's rules, a policy) with a model: the
model answers in rubricflow's native format as JSON, the draft is compiled, and a draft that does
not compile is asked for again once with the compiler's errors."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import Bundle, CompileIssue, compile_rubric, profile_of
from rubricflow.rubrics.documents import rubric_from_data
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.properties import seed_profile
from rubricflow.rubrics.render import fence_tag
from rubricflow.tasks.improve.primitives import compose
from rubricflow.tasks.judging.chat import ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.prompts import GENERATE_MARK
from rubricflow.tasks.judging.verify import AnswerError, parse_json_answer

SOURCE_CHARS = 60_000  # what a draft reads of the source


class GenerateError(InputError):
    """The model's drafts did not become a rubric that compiles."""


@dataclass
class Draft:
    bundle: Bundle
    issues: list[CompileIssue]
    attempts: int


def messages(source: str, rubric_id: str, errors: Sequence[str] = (), kind: str | None = None) -> list[dict]:
    """The drafting prompt; with a `kind`, the seed's generator for that kind (its instruction primitives)."""
    tag = fence_tag(source)
    system = (
        f"{GENERATE_MARK} from the source document in the user message, in rubricflow's native format, "
        "as one JSON object. Turn each rule of the source into a criterion a reader can check in a text: "
        "an observable description, an ordinal scale with an anchor for every level (or a binary scale), "
        "a weight where rules differ in importance; add regular-expression patterns for rules a "
        "pattern can check, and disqualifiers for rules whose breach fails a text outright. "
        f"Use metadata.id {rubric_id!r} and version 1.0.0.\n"
        + (compose(kind) + "\n" if kind else "")
        + f"JSON Schema of the answer:\n{json.dumps(Rubric.model_json_schema())}"
    )
    user = f"<<<BEGIN SOURCE {tag}>>>\n{source[:SOURCE_CHARS]}\n<<<END SOURCE {tag}>>>"
    if errors:
        user += "\n\nYour last draft did not compile; fix these errors:\n" + "\n".join(f"- {e}" for e in errors)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def read_source(source_path: Path) -> str:
    """A source document's text, or an InputError naming the file (not a traceback)."""
    try:
        return source_path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source_path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise InputError(f"{source_path}: cannot be read: {exc.strerror or exc}") from None


def default_id(source_path: Path) -> str:
    """The drafted rubric's id when --id is not given: the source file's name, slugged."""
    return re.sub(r"[^a-z0-9]+", "-", source_path.stem.lower()).strip("-") or "drafted"


def _described(rubric) -> str:
    """What the seed's profiles make of a draft: `a compliance rubric`, or what none of them holds."""
    found = seed_profile(rubric)
    return f"a {found} rubric" if found else f"no rubric of the seed's profiles (nearest: {profile_of(rubric)})"


def draft(
    config: JudgeConfig, source_path: Path, rubric_id: str | None = None, attempts: int = 2, kind: str | None = None
) -> Draft:
    """Ask for a draft until one compiles (and, with a `kind`, has that kind's profile), `attempts` times at most."""
    source = read_source(source_path)
    if not source.strip():
        raise InputError(f"{source_path}: the source document is empty")
    rubric_id = rubric_id or default_id(source_path)
    errors: list[str] = []
    for attempt in range(1, attempts + 1):
        content = ask(config, messages(source, rubric_id, errors, kind))
        try:
            rubric = rubric_from_data(parse_json_answer(content), f"draft {attempt}")
        except (AnswerError, InputError) as exc:
            errors = [str(exc)]
            continue
        if rubric.metadata.id != rubric_id:  # the id is the user's (--id), not the model's choice
            rubric = rubric.model_copy(update={"metadata": rubric.metadata.model_copy(update={"id": rubric_id})})
        bundle, issues = compile_rubric(rubric)
        if bundle is not None and kind and seed_profile(rubric) != kind:  # the seed's definition, no fallback
            errors = [f"the draft is {_described(rubric)}, not a {kind} rubric: follow the rules for {kind}"]
            continue
        if bundle is not None:
            return Draft(bundle, issues, attempt)
        errors = [str(i) for i in issues if i.severity == "error"]
    raise GenerateError(
        f"{source_path}: the model's {attempts} drafts did not compile{' as a ' + kind + ' rubric' if kind else ''}; last errors: {'; '.join(errors)}"
    )
