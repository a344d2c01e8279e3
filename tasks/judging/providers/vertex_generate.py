"""Google's Vertex AI (POST /v1beta1/projects/P/locations/L/publishers/google/models/M:generateContent),
through Google's own SDK (google-genai with `vertexai=True`: Application Default Credentials and
their token refresh, the project's URL, the error format are the SDK's). The body is the Gemini
API's (the same generateContent shape: tasks/judging/providers/gemini_generate.py) and the SDK
sends it over the judge's own HTTP client, so the answer cap and the deadline hold as for every
provider. Needs the `vertex` extra. Spec:
https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1beta1/projects.locations.endpoints/generateContent"""

from __future__ import annotations

from typing import Any

from rubricflow.errors import InputError
from rubricflow.settings import endpoint

from .gemini_generate import GeminiGenerate
from .sdk_calls import http_library, need, no_answer, sdk_client, status_error


class VertexGenerate(GeminiGenerate):
    name = "vertex"
    otel_name = "gcp.vertex_ai"
    # google-auth reads the credentials itself (Application Default Credentials: this file, or
    # gcloud's login, or the metadata server); the file's path is scrubbed like a key
    key_variables = ("GOOGLE_APPLICATION_CREDENTIALS",)
    base_url_variable = "GOOGLE_VERTEX_BASE_URL"

    def base_url(self, given: str | None = None) -> str:
        """The endpoint; the project is checked here, so a judge without one stops before any call."""
        need("google.genai", self.name)
        if not endpoint("GOOGLE_CLOUD_PROJECT"):
            raise InputError("--provider vertex needs GOOGLE_CLOUD_PROJECT (the Google Cloud project to call)")
        if given or endpoint(self.base_url_variable):
            return given or str(endpoint(self.base_url_variable))
        where = location()
        return (
            "https://aiplatform.googleapis.com" if where == "global" else f"https://{where}-aiplatform.googleapis.com"
        )

    def headers(self, key: str) -> dict[str, Any]:
        return {}  # the SDK signs each request with the credentials' token

    def request_headers(self) -> dict[str, Any]:
        return {}

    async def post(self, client: Any, body: dict[str, Any], timeout_s: float) -> Any:
        from google.genai import errors

        vertex = sdk_client(client, lambda: _vertex(client, timeout_s))
        wire = self.request(body)
        config = {**wire["generationConfig"], **{k: v for k, v in wire.items() if k == "systemInstruction"}}
        if "responseSchema" in config:  # the schema as JSON Schema: the SDK's Schema type takes string enums only
            config.pop("responseSchema")
            config["responseJsonSchema"] = body["response_format"]["json_schema"].get("schema") or {"type": "object"}
        try:
            answer = await vertex.aio.models.generate_content(
                model=body["model"], contents=wire["contents"], config=config
            )
        except errors.APIError as exc:
            raise status_error(client, exc.code, str(exc.message or exc), exc.details) from exc
        except http_library(client).TimeoutException as exc:
            raise no_answer(client, exc, timed_out=True) from exc
        except http_library(client).TransportError as exc:  # refused, dropped, or a name that does not resolve
            raise no_answer(client, exc, timed_out=False) from exc
        return answer.model_dump(mode="json", by_alias=True, exclude_none=True)  # the REST shape Gemini's reader takes


def location() -> str:
    return endpoint("GOOGLE_CLOUD_LOCATION") or "global"


def _vertex(client: Any, timeout_s: float) -> Any:
    """google-genai's client for Vertex AI at this endpoint, over the judge's HTTP client (capped
    answers), one attempt (the judge's retry layer decides), the whole-answer timeout."""
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=str(client.base_url),
        timeout=int(timeout_s * 1000),
        retry_options=types.HttpRetryOptions(attempts=1),
        httpx_async_client=client._client,  # the openai client's: every answer's body capped (answer_cap)
    )
    return genai.Client(
        vertexai=True, project=endpoint("GOOGLE_CLOUD_PROJECT"), location=location(), http_options=options
    )
