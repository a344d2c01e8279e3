"""Where a parsed document holds a lone surrogate: JSON's (and YAML's) `\ud800`-`\udfff` escapes
read as a string no UTF-8 can encode, which failed later, with a traceback, wherever the text was
encoded (a judge request, a content hash, a Parquet column). Named by its path, so the error can say
which field: `body.rollouts[0].completion`, `rubric.criteria[2].description`."""

from __future__ import annotations

from typing import Any

SURROGATES = range(0xD800, 0xE000)


def lone_surrogate(value: Any, where: str) -> str | None:
    """The path of the first string (or key) in `value` holding a surrogate, else None."""
    if isinstance(value, str):
        return None if value.isascii() or not any(ord(c) in SURROGATES for c in value) else where
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if isinstance(key, str) and lone_surrogate(key, where):
            return f"{where}: a key"
        if found := lone_surrogate(item, f"{where}.{key}" if isinstance(key, str) else f"{where}[{key}]"):
            return found
    return None
