"""Keep secrets out of everything rubricflow stores: the API key is read from the environment
only, and any text that came back from an endpoint or an exception (raw answers, errors,
rationales, run messages) is scrubbed of it, and of anything shaped like a credential, before
it is landed. An endpoint that echoes the request's Authorization header stores "[redacted]"."""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

from rubricflow.tasks.judging.providers import key_variables

REDACTED = "[redacted]"
_CREDENTIALS = [
    re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}"),  # an Authorization header's value
    re.compile(
        r"(?i)\b(api[-_]?key|x-api-key|authorization|access[-_]?token|secret)([\"']?\s*[:=]\s*[\"']?)[^\s\"',;&]{6,}"
    ),
    re.compile(r"()()\bsk-[A-Za-z0-9_-]{8,}"),  # OpenAI-style keys
]
# Every credential pattern above needs one of these words: one quick search clears most texts (a
# judge's raw answer names `prompt_tokens`, so `token` alone sent every answer through all three).
_MAYBE = re.compile(r"(?i)bearer|basic|api[-_]?key|authorization|access[-_]?token|secret|sk-")
# Words one of which every match of _MAYBE holds, looked for first in an ASCII text lowered (where
# lowering is exactly how re.IGNORECASE folds it): the case-insensitive search scans ~40 us for one
# rationale, these ~1 us, and three rationales a rollout made scrubbing ~2% of the reward server's CPU.
_MAYBE_WORDS = ("bearer", "basic", "api", "authorization", "access", "secret", "sk-")
CREDENTIAL_QUERY_KEYS = {  # query parameters that carry a credential (Azure: `code`, some proxies: x-api-key)
    "key",
    "api_key",
    "api-key",
    "apikey",
    "x-api-key",
    "x_api_key",
    "token",
    "access_token",
    "auth",
    "code",
    "password",
    "secret",
    "client_secret",
    "sig",
    "signature",
}


def configured_keys() -> list[str]:
    """Every provider's key that is set (whichever a call used), for `scrub(text, keys)` over many
    texts: reading the 18 variables for each text was ~10% of the reward server's CPU."""
    return [key for variable in key_variables() if len(key := os.environ.get(variable) or "") >= 6]


def scrub(text: str | None, keys: list[str] | None = None) -> str | None:
    """`text` with the configured API keys (`keys`: `configured_keys()`, read now when not given)
    and credential-shaped strings replaced by [redacted]."""
    if not text:
        return text
    for key in configured_keys() if keys is None else keys:
        text = text.replace(key, REDACTED)
    if not _maybe_credential(text):
        return text
    for pattern in _CREDENTIALS:
        text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return text


def _maybe_credential(text: str) -> bool:
    """Whether `text` may hold a credential-shaped string: _MAYBE's search, skipped for an ASCII
    text that holds none of its words."""
    if text.isascii():
        lowered = text.lower()
        if not any(word in lowered for word in _MAYBE_WORDS):
            return False
    return _MAYBE.search(text) is not None


CREDENTIAL_SHAPE = re.compile(r"key|token|secret|pass|pwd|sig|auth|credential|session|code", re.IGNORECASE)


def url_credentials(url: str) -> list[str]:
    """What in a URL would be a secret if stored: a user or password, or a named value whose name
    has a credential's shape (`sslpassword`, `subscription-key`, `x-auth-token`, ...) in the query,
    the fragment (`#token=`) or a path parameter (`;key=`); by shape, not by a list of names."""
    parts = urlsplit(url)
    found = ["user:password" if parts.password else "user"] if parts.username else []
    places = {"query": parts.query, "fragment": parts.fragment, "path": ";".join(parts.path.split(";")[1:])}
    for place, text in places.items():
        for pair in filter(None, re.split(r"[&;]", text)):
            name = pair.split("=", 1)[0].lower()
            if name in CREDENTIAL_QUERY_KEYS or ("=" in pair and CREDENTIAL_SHAPE.search(name)):
                found.append(f"{place} parameter {name!r}")
    if not found and _shaped(unquote(url)):  # `?q=sk-proj-...`: a key under a name of no credential's shape
        found.append("a value shaped like a key")
    return found


def _shaped(text: str) -> bool:
    """Whether `text` holds the configured key or a credential-shaped string (what `scrub` removes)."""
    return scrub(text) != text
