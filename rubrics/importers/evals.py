"""OpenAI Evals model-graded specs: a prompt with {input}/{completion}/{ideal} slots, the choices
the grader may answer and (optionally) the score of each choice. `choice_strings` is a list, a
string of one-character choices ("12345"), or `from_n` / `from_n_abc` / `from_n_ABC`: one choice
per completion compared, counted here from the prompt's `{completion1}`, `{completion2}`... slots.

Read as openai/evals reads them: `format_type` (evals' format_classify; `in_message` by default) says
whether the prompt holds the sample in its slots or follows it as a conversation (`out_message`: the
user's input, the assistant's completion, then the prompt); `output_template` (and its earlier form
`completion_sample_templates`, a template per completion slot) is how several sampled completions are
written into one `{completion}` slot (evals' concat_n_completions: `{i}`, `{i_abc}`, `{i_ABC}`, `{output}`)."""

from __future__ import annotations

import re
import string
from pathlib import Path

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab

SPEC_FIELDS = {
    "prompt",
    "choice_strings",
    "choice_scores",
    "input_outputs",
    "eval_type",
    "args",
    "output_template",
    "completion_sample_templates",
    "format_type",
}
FORMAT_TYPES = ("in_message", "out_message")  # openai/evals' format_classify
BEST_OF = (
    2  # scored as it is, best-of-n reads a pair: [Response A] and [Response B]; `rubricflow best-of` asks n at once
)
PAIR_NOTE = "Best of n, judged as a comparison of"  # the pair reading's note, replaced by rubrics/best_of.py
FROM_N = {
    "from_n": lambda i: str(i + 1),
    "from_n_abc": lambda i: string.ascii_lowercase[i % 26],
    "from_n_ABC": lambda i: string.ascii_uppercase[i % 26],
}


def looks_like_spec(data: dict) -> bool:
    """A model-graded spec itself: a prompt, the grader's choices, and only the spec's own fields."""
    return "prompt" in data and "choice_strings" in data and set(map(str, data)) <= SPEC_FIELDS


def best_of_n(spec: dict, prompt: str) -> bool:
    """`from_n` with ONE `{completion}` slot that the sampled outputs fill, numbered by
    `completion_sample_templates` / `output_template` (openai/evals' `best.yaml`): best-of-n."""
    numbered = re.findall(r"\{completion(\d+)\}", prompt)
    templated = "completion_sample_templates" in spec or "output_template" in spec
    choices = spec.get("choice_strings")
    return isinstance(choices, str) and choices in FROM_N and not numbered and "{completion}" in prompt and templated


def _choices(name: str, choices: object, prompt: str, source: Path, best_of: bool = False) -> list:
    if isinstance(choices, str) and choices in FROM_N:
        n = BEST_OF if best_of else len(set(re.findall(r"\{completion(\d+)\}", prompt)))
        if n < 2:
            raise RubricImportError(
                source,
                f"field {name}.choice_strings: {choices!r} means one choice per completion compared, and the "
                "prompt numbers none ({completion1}, {completion2}...); write the choices out as a list",
            )
        return [FROM_N[choices](i) for i in range(n)]
    if isinstance(choices, str):
        choices = list(choices)
    if not choices or not isinstance(choices, list):
        raise RubricImportError(source, f"field {name}.choice_strings: the grader's choices are required (a list)")
    return choices


def _from_strings(name: str, choices: list, source: Path) -> dict:
    """`choice_scores: from_strings`: each choice is its own score, so each must be a number."""
    try:
        return {c: float(c) for c in choices}
    except (TypeError, ValueError):
        raise RubricImportError(
            source, f"field {name}.choice_scores: from_strings needs choices that are numbers, found {choices}"
        ) from None


def import_evals(data: dict, source: Path) -> Rubric:
    name, spec = next(iter(data.items()))
    prompt = spec.get("prompt")
    if isinstance(prompt, list):  # chat-style prompt: a list of messages
        prompt = "\n\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))
    if not isinstance(prompt, str) or not prompt.strip():
        raise RubricImportError(source, f"field {name}.prompt: missing or empty")
    best_of = best_of_n(spec, prompt)
    choices = _choices(name, spec.get("choice_strings"), prompt, source, best_of)
    scores = spec.get("choice_scores") or ({choices[0]: 1.0, choices[1]: 0.0} if best_of else {})
    if scores == "from_strings":
        scores = _from_strings(name, choices, source)
    if not isinstance(scores, dict):
        raise RubricImportError(source, f"field {name}.choice_scores: a map of choice to score, or from_strings")
    wrong = [c for c, v in scores.items() if isinstance(v, bool) or not isinstance(v, (int, float))]
    if wrong:
        raise RubricImportError(
            source, f"field {name}.choice_scores.{wrong[0]}: a number is required, found {scores[wrong[0]]!r}"
        )
    bad = [c for c in scores if c not in choices]
    if bad:
        raise RubricImportError(source, f"field {name}.choice_scores: {bad} are not among the choices {choices}")
    values = [float(v) for v in scores.values()]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if values and low == high:  # one score, or all alike: min-max made each 0 (`{Yes: 1.0}` scored Yes 0)
        if not 0 <= low <= 1:
            raise RubricImportError(
                source, f"field {name}.choice_scores: every choice scores {low:g}, none above another"
            )
        low = 0.0  # the scores as the spec gives them, already on [0, 1]
    span = (high - low) or 1.0
    categories = [{"value": str(c), "score": (float(scores[c]) - low) / span if c in scores else None} for c in choices]
    instructions = [
        "The grader prompt below is the rubric's original wording; its {input}, {completion}, {ideal} and "
        "{criteria} slots refer to the INPUT, the TEXT and the CONTEXT blocks of the data.",
        prompt.strip(),
    ]
    instructions += _layout(name, spec, choices, best_of, source)
    if spec.get("eval_type") in ("cot_classify", "classify_cot"):
        instructions.append("Reason step by step in the rationale before choosing.")
    criteria = _criteria(name, spec, choices, categories, source)
    doc = {
        "metadata": {
            "id": kebab(str(name)),
            "title": str(name),
            "provenance": {
                "format": "openai-evals-modelgraded",
                "source": source.name,
                "eval_type": str(spec.get("eval_type", "")),
                "format_type": _format_type(name, spec, source),
                **({"output_template": template} if (template := _sample_template(name, spec, source)) else {}),
                **(
                    {"best_of_n": "n-way comparison: `rubricflow best-of` judges n candidates in one call"}
                    if best_of
                    else {}
                ),
            },
        },
        "goal": f"Grade the submission as the OpenAI Evals '{name}' model-graded eval does.",
        "criteria": criteria,
        "instructions": instructions,
    }
    return rubric_from_data(doc, source)


def _format_type(name: str, spec: dict, source: Path) -> str:
    """`in_message` (the default) or `out_message`, which evals allows for one input/output pair only."""
    kind = spec.get("format_type", "in_message")
    if kind not in FORMAT_TYPES:
        raise RubricImportError(source, f"field {name}.format_type: one of {', '.join(FORMAT_TYPES)}, found {kind!r}")
    pairs = spec.get("input_outputs") if kind == "out_message" else None
    if kind == "out_message" and (not isinstance(pairs, dict) or len(pairs) != 1):
        raise RubricImportError(
            source, f"field {name}.input_outputs: format_type out_message takes exactly one input: completion pair"
        )
    return kind


def _sample_template(name: str, spec: dict, source: Path) -> str | None:
    """How each sampled completion is written into the `{completion}` slot: `output_template`, or the
    earlier `completion_sample_templates` (slot -> template; the completion slot's)."""
    template = spec.get("output_template")
    field = "output_template"
    older = spec.get("completion_sample_templates")
    if template is None and older is not None:
        if not isinstance(older, dict) or not older:
            raise RubricImportError(source, f"field {name}.completion_sample_templates: a map of slot -> template")
        slot, template = next(iter(older.items()))
        field = f"completion_sample_templates.{slot}"
    if template is not None and (not isinstance(template, str) or "{output}" not in template):
        raise RubricImportError(source, f"field {name}.{field}: a template with an {{output}} slot, found {template!r}")
    return template


def _layout(name: str, spec: dict, choices: list, best_of: bool, source: Path) -> list[str]:
    """What the judge must know of how the sample is laid out: the conversation of `out_message`, the
    numbering of several completions in one slot, the best-of pair reading."""
    notes = []
    if _format_type(name, spec, source) == "out_message":
        notes.append(
            "As openai/evals asks it (format_type out_message), the grader prompt follows a conversation: the "
            "user's message is the INPUT block and the assistant's response is the TEXT block; where the prompt "
            "says the assistant's (your) last response above, it means the TEXT."
        )
    template = _sample_template(name, spec, source)
    if template is not None and best_of:
        shown = template.strip().replace("{output}", "...").replace("{i}", "1")
        notes.append(
            f"{PAIR_NOTE} {BEST_OF}: the TEXT holds the responses as [Response A] and [Response B] (the eval writes "
            f"each as its output_template `{template.strip()}`, e.g. `{shown}`); {{n}} is {BEST_OF}, choice "
            f"{choices[0]} is Response A and {choices[1]} is Response B."
        )
    elif template is not None:
        notes.append(
            f"The TEXT holds several completions, each written as the eval's output_template `{template.strip()}` "
            "({i} its number from 1, {i_abc} / {i_ABC} its letter, {output} the completion); {n} is how many there are."
        )
    return notes


def _criteria(name: str, spec: dict, choices: list, categories: list[dict], source: Path) -> list[dict]:
    """One criterion, the grader's choice; or, with `args: {criteria: {id: text}}` (the eval asks the
    same question once per criterion, as `closedqa` does), one criterion per entry."""
    scale = {"kind": "nominal", "categories": categories}
    asked = (spec.get("args") or {}).get("criteria") if isinstance(spec.get("args"), dict) else None
    if asked is None:
        said = "The grader's answer: one of " + ", ".join(map(str, choices)) + "."
        return [{"id": "choice", "title": f"{name} choice", "description": said, "scale": scale}]
    if not isinstance(asked, dict) or not asked:
        raise RubricImportError(source, f"field {name}.args.criteria: a map of criterion -> its wording is required")
    return [
        {"id": kebab(str(cid)), "title": str(cid), "description": str(text), "scale": scale}
        for cid, text in asked.items()
    ]
