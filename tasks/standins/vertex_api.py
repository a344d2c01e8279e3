"""The offline judge behind Google's Vertex AI (POST /v1beta1/projects/P/locations/L/publishers/google/
models/M:generateContent) and the OAuth token endpoint a service account's key file names, written
from the APIs' references: a request needs `Authorization: Bearer` with a token this server issued
(401 UNAUTHENTICATED otherwise), and the token endpoint issues one for an assertion signed with
the key it was configured with (400 invalid_grant otherwise), as Google's does for Application
Default Credentials of type `service_account`. The body is the Gemini API's generateContent (checked by
tasks/standins/generate_content_api.py). Tests use it to show that an SDK provider is one module
(tasks/judging/providers/vertex_generate.py)."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any
from urllib.parse import parse_qs

from . import generate_content_api

ROUTE = re.compile(
    r"/(v1|v1beta1)/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:]+):generateContent"
)


def model_of(path: str) -> str | None:
    """The model of a Vertex AI generateContent route, else None."""
    found = ROUTE.fullmatch(path)
    return found.group(4) if found else None


ISSUED: set[str] = set()  # the access tokens this server's token endpoint gave out
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def token(raw: bytes, public_key: str | None) -> tuple[int, dict[str, Any]]:
    """The OAuth token endpoint's answer to a service account's signed assertion (RS256, as
    google-auth makes it from the key file's private key); with `public_key` (PEM), a signature
    it does not verify is refused with invalid_grant, as Google's endpoint refuses it."""
    form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
    assertion = form.get("assertion", "")
    if form.get("grant_type") != JWT_BEARER or assertion.count(".") != 2:
        return 400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type"}
    head, claims, signature = assertion.split(".")
    if public_key is not None and not _verified(f"{head}.{claims}".encode(), _unb64(signature), public_key):
        return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
    issued = "ya29.stand-in-" + hashlib.sha256(assertion.encode()).hexdigest()[:24]
    ISSUED.add(issued)
    return 200, {"access_token": issued, "expires_in": 3599, "token_type": "Bearer"}


def _verified(signed: bytes, signature: bytes, public_key: str) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding

    key: Any = serialization.load_pem_public_key(public_key.encode())
    try:
        key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def refusal(body: Any, headers: dict[bytes, bytes], public_key: str | None) -> tuple[int, dict[str, Any]] | None:
    """(status, error) for a request Vertex AI would refuse, else None."""
    bearer = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
    if bearer not in ISSUED:
        return generate_content_api.error(
            401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token."
        )
    if headers.get(b"x-goog-api-key"):
        return generate_content_api.error(400, "INVALID_ARGUMENT", "API keys are not supported by this API.")
    unsigned = {k: v for k, v in headers.items() if k != b"authorization"}
    return generate_content_api.refusal(body, unsigned, None)
