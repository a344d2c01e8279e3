"""promptfoo model-graded assertions: `llm-rubric` (pass/fail against a rubric text) and `g-eval`
(a 0-1 score against criteria, with a threshold), from a `promptfooconfig.yaml` (`defaultTest`
and every test's `assert`), an asserts file (a list of assertions, or `{assert: [...]}`) or a
test-case file (a list of tests with `vars` and `assert`, as `tests: file://cases/*.yaml` loads).
Each distinct assertion becomes one criterion; other assertion types (contains, regex, cost...)
are checks promptfoo runs itself, not rubric criteria, and are left out. A custom grading prompt
(`rubricPrompt`: in `defaultTest.options`, a test's `options` or an assertion; text, a list of
chat messages, or `file://PATH`, a YAML/JSON file of messages read as messages) becomes the
rubric's instructions; several assertions of one rubric (one per judge) are one criterion; a
config whose grading is that prompt alone becomes one pass/fail criterion judged by it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import RubricImportError, parse_yaml, rubric_from_data
from ..model import Rubric
from .common import kebab, safe_id

GRADED = ("llm-rubric", "g-eval", "model-graded-closedqa")
G_EVAL_LEVELS = [
    {"value": v, "description": d}
    for v, d in (
        (1, "does not meet the criteria"),
        (2, "meets few of the criteria"),
        (3, "meets the criteria in part"),
        (4, "meets most of the criteria"),
        (5, "fully meets the criteria"),
    )
]


def assertions(data: Any) -> list[dict]:
    """Every model-graded assertion in a config or asserts file, in file order."""
    found: list[dict] = []

    def take(items: Any) -> None:
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and str(item.get("type", "")).removeprefix("not-") in GRADED:
                found.append(item)
            elif isinstance(item, dict) and item.get("type") in ("assert-set",):
                take(item.get("assert"))

    data = _as_config(data)
    if isinstance(data, dict):
        take(data.get("assert"))
        default = data.get("defaultTest")
        if isinstance(default, dict):
            take(default.get("assert"))
        for test in data.get("tests") or [] if isinstance(data.get("tests"), list) else []:
            if isinstance(test, dict):
                take(test.get("assert"))
    return found


def _as_config(data: Any) -> Any:
    """A list at the top level as the config it stands for: its assertions under `assert`, its
    test cases (a mapping with `assert` or `vars` and no `type`) under `tests`."""
    if not isinstance(data, list):
        return data
    tests = [i for i in data if isinstance(i, dict) and "type" not in i and ("assert" in i or "vars" in i)]
    return {"assert": [i for i in data if not any(i is t for t in tests)], "tests": tests}


def rubric_prompts(data: Any) -> list[Any]:
    """Every custom grading prompt (`rubricPrompt`) of a config, in file order."""
    data = _as_config(data)
    if not isinstance(data, dict):
        return []
    holders = [data.get("options"), _get(data.get("defaultTest"), "options")]
    tests = data.get("tests")
    holders += [_get(test, "options") for test in (tests if isinstance(tests, list) else [])]
    holders += assertions(data)
    return [h["rubricPrompt"] for h in holders if isinstance(h, dict) and h.get("rubricPrompt")]


def _get(holder: Any, key: str) -> Any:
    return holder.get(key) if isinstance(holder, dict) else None


def looks_like_promptfoo(data: Any) -> bool:
    return bool(assertions(data)) or bool(rubric_prompts(data))


def import_promptfoo(data: Any, source: Path) -> Rubric:
    found = assertions(data)
    prompts = [_prompt_text(p, source) for p in rubric_prompts(data)]
    prompts = list(dict.fromkeys(p for p in prompts if p))  # each distinct prompt once
    if not found and not prompts:
        raise RubricImportError(source, f"no {', '.join(GRADED)} assertions or rubricPrompt: nothing a judge scores")
    criteria = _criteria(found, source, graded_by_prompt=bool(prompts)) or [
        {
            "id": "rubric-prompt",
            "title": "rubricPrompt",
            "description": "The output passes the grading prompt in the instructions (promptfoo's rubricPrompt).",
            "scale": {"kind": "binary", "labels": ["fail", "pass"]},
            "tags": ["rubricPrompt"],
        }
    ]
    name = str(
        data.get("description") if isinstance(data, dict) and isinstance(data.get("description"), str) else source.stem
    )
    doc = {
        "metadata": {
            "id": kebab(source.stem if source.stem != "promptfooconfig" else name),
            "title": name,
            "provenance": {"format": "promptfoo", "source": source.name},
        },
        "goal": f"Grade the output by the model-graded assertions of {source.name}.",
        "instructions": prompts,
        "criteria": criteria,
    }
    return rubric_from_data(doc, source)


def _criteria(found: list[dict], source: Path, graded_by_prompt: bool = False) -> list[dict]:
    """One criterion per distinct model-graded assertion; one without a `value` is graded by the
    config's `rubricPrompt` (promptfoo's documented layout), which the instructions carry."""
    criteria: list[dict] = []
    seen: set[str] = set()
    for i, item in enumerate(found):
        where = f"assertion {i + 1} ({item.get('type')})"
        value = _rubric_text(item.get("value"), source, where)
        text = "\n".join(f"- {v}" for v in value) if isinstance(value, list) else str(value or "").strip()
        if not text and graded_by_prompt:
            text = "The output passes the grading prompt in the instructions (promptfoo's rubricPrompt)."
        if not text:
            raise RubricImportError(source, f"{where}: no `value` (the rubric text) and no `rubricPrompt` to grade by")
        if text in seen:  # the same rubric asserted by several tests (or judges) is one criterion
            _also_named(criteria, text, item.get("metric"))
            continue
        seen.add(text)
        kind = str(item["type"])
        cid = safe_id(item.get("metric") or f"{kind.removeprefix('not-')}-{len(criteria) + 1}", f"criterion-{i + 1}")
        criterion: dict = {"id": cid, "title": str(item.get("metric") or kind), "description": text, "tags": [kind]}
        threshold = _number(item, "threshold", where, source, high=1.0)
        if kind.endswith("g-eval"):
            criterion["scale"] = {"kind": "ordinal", "anchors": G_EVAL_LEVELS}
            if threshold is not None:
                criterion["pass_threshold"] = threshold
        else:
            criterion["scale"] = {"kind": "binary", "labels": ["fail", "pass"]}
            if kind.startswith("not-"):
                criterion["description"] = f"The output must NOT meet this rubric: {text}"
        weight = _number(item, "weight", where, source)
        if weight is not None:
            criterion["weight"] = weight
        criteria.append(criterion)
    return criteria


def _also_named(criteria: list[dict], text: str, metric: Any) -> None:
    """A repeated assertion's own `metric` name (promptfoo's config asking several judges the same
    rubric names each judge's verdict) is kept on the one criterion as a `metric:` tag."""
    kept = next(c for c in criteria if c["description"].endswith(text))
    if metric and str(metric) != kept["title"] and f"metric:{metric}" not in kept["tags"]:
        kept["tags"].append(f"metric:{metric}")


def _number(item: dict, field: str, where: str, source: Path, high: float | None = None) -> float | None:
    """A numeric field of an assertion (absent: None); any other type, or a value out of range, is
    an error naming the field, never a silent default (promptfoo's thresholds are 0 to 1)."""
    value = item.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RubricImportError(source, f"{where}: `{field}` must be a number, found {value!r}")
    if value < 0 or (high is not None and value > high):
        bound = f"0 to {high:g}" if high is not None else "0 or more"
        raise RubricImportError(source, f"{where}: `{field}` {value!r} is outside {bound}")
    return float(value)


def _rubric_text(value: Any, source: Path, where: str) -> Any:
    """An assertion's rubric: text, a list of texts, or `file://PATH` read relative to the config
    (as promptfoo reads it); a file that is missing is an error naming it."""
    if isinstance(value, str) and value.startswith("file://"):
        path = (source.parent / value.removeprefix("file://")).resolve()
        try:
            return path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise RubricImportError(source, f"{where}: `value` names {value}, which cannot be read ({exc})") from None
    if value is not None and not isinstance(value, (str, list)):
        raise RubricImportError(source, f"{where}: `value` must be text or a list of texts, found {value!r}")
    return value


def _prompt_text(prompt: Any, source: Path) -> str:
    """A rubricPrompt as text: a string (or `file://PATH`), or chat messages joined by role."""
    if isinstance(prompt, list):
        return "\n\n".join(
            f"{m.get('role', 'user')}: {m.get('content', '')}" if isinstance(m, dict) else str(m) for m in prompt
        ).strip()
    if isinstance(prompt, str):
        text = str(_rubric_text(prompt, source, "rubricPrompt")).strip()
        if prompt.startswith("file://") and prompt.endswith((".yaml", ".yml", ".json")):
            messages = parse_yaml(text, source.parent / prompt.removeprefix("file://"))
            return _prompt_text(messages, source) if isinstance(messages, list) else text
        return text
    raise RubricImportError(source, f"`rubricPrompt` must be text or a list of messages, found {prompt!r}")
