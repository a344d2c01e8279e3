"""Rubric documents: parsed YAML/JSON data to a typed rubric and back.

The leaf of the file-format code: `formats` and every importer build on it, and it imports
neither, so the two never import each other.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rubricflow.errors import InputError

from .model import Rubric

try:  # the C parser is ~10x faster; both are safe loaders (no custom tags)
    _BASE_LOADER: Any = yaml.CSafeLoader
    SAFE_DUMPER: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BASE_LOADER, SAFE_DUMPER = yaml.SafeLoader, yaml.SafeDumper


MERGE = "tag:yaml.org,2002:merge"


class DuplicateKey(ValueError):
    """A key written twice in one mapping (YAML or JSON): which value is meant is the author's to say."""

    def __init__(self, key: str, line: int | None = None):
        self.key, self.line = key, line
        super().__init__(f"key {key!r} is written twice in one mapping" + (f" (line {line})" if line else ""))


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    """json.loads' object_pairs_hook: a JSON object whose key is written twice is refused."""
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(key)
        seen[key] = value
    return seen


class YamlFloat(float):
    """A YAML float that remembers how it was written: `version: 2.10` is 2.10.0, not 2.1.0."""

    yaml_text: str = ""


class SAFE_LOADER(_BASE_LOADER):  # noqa: N801 (named as the constant it replaces)
    """The safe loader with YAML 1.2's booleans: only true/false are booleans; `yes`, `no`, `on`,
    `off` stay strings (YAML 1.1 would turn `labels: [no, yes]` into [False, True])."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in _BASE_LOADER.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node, deep=False):
        """A mapping whose key is written twice is refused (the last silently won: `weight: 3` then
        `weight: 0` was weight 0). Checked before merge keys (`<<`) are applied: a key that overrides
        a merged one is YAML's meaning, not a repeat."""
        written = Counter((k.tag, k.value) for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.tag != MERGE)
        for key_node, _ in node.value:
            if written.get((key_node.tag, key_node.value), 0) > 1:
                raise DuplicateKey(key_node.value, key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_float(self, node):
        number = YamlFloat(super().construct_yaml_float(node))
        number.yaml_text = str(node.value)
        return number


SAFE_LOADER.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
SAFE_LOADER.add_constructor("tag:yaml.org,2002:float", SAFE_LOADER.construct_yaml_float)

NATIVE_SUFFIXES = (".yaml", ".yml", ".json")


class RubricImportError(InputError):
    """A file that cannot be read as a rubric; the message names the file and the field."""

    def __init__(self, source: str | Path, message: str):
        self.source = str(source)
        super().__init__(f"{source}: {message}")


MAX_EXPANDED_VALUES = 200_000  # far above any real rubric; a "billion laughs" alias bomb is far above this
CHARACTERS_PER_VALUE = 100  # a long string counts as one value per 100 characters (20 MB expanded at most)


def parse_yaml(text: str, source: str | Path) -> Any:
    """Plain YAML only (no tags), and no document whose aliases expand it past MAX_EXPANDED_VALUES
    values or into itself: a 206 KB file of aliases once grew to 886 MB while being validated."""
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)
    except DuplicateKey as exc:
        raise RubricImportError(source, str(exc)) from None
    except yaml.constructor.ConstructorError as exc:
        raise RubricImportError(
            source, f"YAML tag refused (only plain YAML is read): {exc.problem} {exc.problem_mark}"
        ) from None
    except yaml.YAMLError as exc:
        raise RubricImportError(source, f"invalid YAML: {exc}") from None
    check_expansion(data, source)
    return data


def check_expansion(data: Any, source: str | Path) -> None:
    """Count the values `data` has once every alias is expanded (a string by its length), sharing the
    count of repeated subtrees (so the check itself stays small); refuse recursion and bombs."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        if isinstance(node, str):  # a YAML bomb: one long string aliased 4,000 times counted as 4,000 values
            return 1 + len(node) // CHARACTERS_PER_VALUE
        if not isinstance(node, (dict, list)):
            return 1
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise RubricImportError(source, "a YAML alias refers to itself (a recursive document is not a rubric)")
        open_nodes.add(key)
        children = list(node.keys()) + list(node.values()) if isinstance(node, dict) else node
        total = 1 + sum(size(child) for child in children)
        open_nodes.discard(key)
        sizes[key] = total
        if total > MAX_EXPANDED_VALUES:  # checked per subtree: a bomb is refused while being counted
            aliased = _own_size(data) <= MAX_EXPANDED_VALUES  # a 12 MB file of plain criteria was called a bomb
            why = "its YAML aliases expand it to" if aliased else "it holds"
            raise RubricImportError(
                source,
                f"{why} more than {MAX_EXPANDED_VALUES:,} values (a string counts one per {CHARACTERS_PER_VALUE} "
                f"characters){' (an alias bomb?)' if aliased else ', too large to be a rubric'}; refused",
            )
        return total

    try:
        size(data)
    except RecursionError:
        raise RubricImportError(source, "the YAML is nested too deeply to be a rubric") from None


def validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"field {loc}: {err['msg'].removeprefix('Value error, ')}" + _flow_comma_hint(err))
    return "; ".join(parts)


def _flow_comma_hint(err) -> str:
    """An unknown key with a space in it is most often the tail of a value cut at a comma inside
    an inline `{...}` mapping (`{value: 1, description: Wrong, or unclear.}`): say so."""
    key = str(err["loc"][-1]) if err["loc"] else ""
    if err["type"] != "extra_forbidden" or " " not in key.strip():
        return ""
    return (
        f" (the key {key.strip()!r} has spaces: a comma inside {{...}} starts a new key, so a value was cut "
        "at a comma; quote the value or write the mapping as a block, one key per line)"
    )


def rubric_from_data(data: Any, source: str | Path) -> Rubric:
    """The typed rubric (one with decision rules and scored verdicts judged by its verdict:
    rubrics/verdict_form.py, applied by the model itself)."""
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        raise RubricImportError(source, validation_message(exc)) from None


def rubric_to_data(rubric: Rubric) -> dict:
    """The rubric as the smallest document that loads back to an equal rubric (defaults left out)."""
    data = rubric.model_dump(mode="json", exclude_defaults=True)
    for i, criterion in enumerate(rubric.criteria):  # keep the scale's discriminator
        entry = data["criteria"][i] if "criteria" in data else {}
        if "scale" in entry:
            entry["scale"] = {"kind": criterion.scale.kind, **entry["scale"]}
    return data


def _own_size(data: Any) -> int:
    """The values the document itself writes: what an alias refers to counted once, each alias as one."""
    seen: set[int] = set()
    stack, total = [data], 0
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list) or (isinstance(node, str) and len(node) >= CHARACTERS_PER_VALUE):
            if id(node) in seen:  # an alias of it
                total += 1
                continue
            seen.add(id(node))
        if isinstance(node, str):
            total += 1 + len(node) // CHARACTERS_PER_VALUE
        else:
            total += 1
            if isinstance(node, dict):
                stack.extend([*node.keys(), *node.values()])
            elif isinstance(node, list):
                stack.extend(node)
    return total
