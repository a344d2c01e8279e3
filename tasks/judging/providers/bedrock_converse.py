"""Amazon Bedrock's Converse API (POST /model/MODEL/converse), through AWS's own SDK (boto3's
`bedrock-runtime` client: SigV4 signing, the credential chain, the region's endpoint and error
parsing are the SDK's). The request is the Messages API's translation in Converse's terms (the
system prompt as `system` blocks, a structured answer as a forced tool in `toolConfig`, length and
sampling in `inferenceConfig`) and the answer is read back through the same path, so the judge
negotiates output modes, retries and reads answers as for every other provider. Needs the
`bedrock` extra. Spec: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rubricflow.settings import endpoint

from .anthropic_messages import AnthropicMessages
from .base import Provider
from .sdk_calls import need, no_answer, sdk_client, status_error

STOP_REASONS = {"guardrail_intervened": "refusal", "content_filtered": "refusal"}  # the rest as Anthropic's
CACHING_FAMILIES = ("anthropic.claude", "amazon.nova")  # model ids whose Converse takes cache points
CACHE_POINT = {"type": "default"}  # Converse's spelling of a cache breakpoint (Anthropic's cache_control)
THREADS = 64  # boto3 blocks: its calls run on threads of their own, as many as calls in flight


class BedrockConverse(Provider):
    name = "bedrock"
    otel_name = "aws.bedrock"
    # boto3 reads the credentials itself (AWS_ACCESS_KEY_ID..., a profile, a role); these are the
    # secrets among them, scrubbed from answers and errors like every provider's key
    key_variables = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK")
    base_url_variable = "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"
    # the same models: a forced tool, no logprobs, system a field; Bedrock has no Message Batches
    capabilities = dataclasses.replace(AnthropicMessages.capabilities, batch=None)

    def base_url(self, given: str | None = None) -> str:
        need("boto3", self.name)
        return given or endpoint(self.base_url_variable) or f"https://bedrock-runtime.{region()}.amazonaws.com"

    def request(self, body: dict[str, Any]) -> dict[str, Any]:
        """Converse's arguments, from the Messages API's translation (the same forced tool)."""
        messages = AnthropicMessages().request(body)
        caches = caches_prompts(body["model"])
        converse: dict[str, Any] = {
            "modelId": body["model"],
            "messages": [{"role": m["role"], "content": _blocks(m["content"], caches)} for m in messages["messages"]],
            "inferenceConfig": {"maxTokens": messages["max_tokens"]},
        }
        if "temperature" in messages:
            converse["inferenceConfig"]["temperature"] = messages["temperature"]
        if messages.get("system"):
            converse["system"] = _blocks(messages["system"], caches)
        if messages.get("tools"):
            converse["toolConfig"] = _tool_config(messages)
        return converse

    async def post(self, client: Any, body: dict[str, Any], timeout_s: float) -> Any:
        from botocore import exceptions as aws

        bedrock = sdk_client(client, lambda: _bedrock(str(client.base_url).rstrip("/"), timeout_s))
        call = functools.partial(bedrock.converse, **self.request(body))
        try:
            answer = await asyncio.get_running_loop().run_in_executor(_threads(), call)
        except aws.ClientError as exc:
            said = exc.response.get("Error", {})
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 500
            raise status_error(client, status, str(said.get("Message") or exc), {"error": said}) from exc
        except (aws.ConnectTimeoutError, aws.ReadTimeoutError) as exc:
            raise no_answer(client, exc, timed_out=True) from exc
        except aws.HTTPClientError as exc:  # refused, dropped, or a name that does not resolve
            raise no_answer(client, exc, timed_out=False) from exc
        return {**answer, "modelId": body["model"]}  # Converse does not name the model in its answer

    def response(self, answer: Any) -> Any:
        if not isinstance(answer, dict) or not isinstance((answer.get("output") or {}).get("message"), dict):
            return answer
        blocks = []
        for block in answer["output"]["message"].get("content") or []:
            if "text" in block:
                blocks.append({"type": "text", "text": block["text"]})
            elif "toolUse" in block:
                use = block["toolUse"]
                blocks.append(
                    {"type": "tool_use", "id": use.get("toolUseId"), "name": use.get("name"), "input": use.get("input")}
                )
        usage = answer.get("usage") or {}
        stop = str(answer.get("stopReason") or "end_turn")
        return AnthropicMessages().response(
            {
                "id": (answer.get("ResponseMetadata") or {}).get("RequestId", ""),
                "model": answer.get("modelId", ""),
                "content": blocks,
                "stop_reason": STOP_REASONS.get(stop, stop),
                "usage": {  # Bedrock counts cached prompt tokens apart from inputTokens, as Anthropic does
                    "input_tokens": usage.get("inputTokens"),
                    "output_tokens": usage.get("outputTokens"),
                    "cache_read_input_tokens": usage.get("cacheReadInputTokens"),
                    "cache_creation_input_tokens": usage.get("cacheWriteInputTokens"),
                },
            }
        )


def region() -> str:
    return endpoint("AWS_REGION") or endpoint("AWS_DEFAULT_REGION") or "us-east-1"


def caches_prompts(model_id: str) -> bool:
    """Whether Converse takes `cachePoint` blocks for this model: Claude's and Nova's (Bedrock's
    prompt caching); another model's request carries plain text, as a cache point it does not know
    is refused."""
    return any(family in model_id for family in CACHING_FAMILIES)


def _blocks(content: str | list[dict[str, Any]], caches: bool) -> list[dict[str, Any]]:
    """The Messages API's content (a string, or text blocks whose `cache_control` marks a cache
    breakpoint) in Converse's spelling: text blocks, a `cachePoint` block after each breakpoint."""
    if isinstance(content, str):
        return [{"text": content or " "}]
    blocks: list[dict[str, Any]] = []
    for block in content:
        blocks.append({"text": block.get("text") or " "})
        if caches and block.get("cache_control"):
            blocks.append({"cachePoint": CACHE_POINT})
    return blocks


def _tool_config(messages: dict[str, Any]) -> dict[str, Any]:
    """The Messages API's tools and tool_choice in Converse's terms."""
    tools = [
        {
            "toolSpec": {
                "name": t["name"],
                "description": t["description"] or t["name"],
                "inputSchema": {"json": t["input_schema"]},
            }
        }
        for t in messages["tools"]
    ]
    choice = messages.get("tool_choice") or {}
    return {"tools": tools, **({"toolChoice": {"tool": {"name": choice["name"]}}} if choice.get("name") else {})}


def _bedrock(url: str, timeout_s: float) -> Any:
    """boto3's bedrock-runtime client for this endpoint: one attempt (the judge's retry layer
    decides), the whole-answer timeout as its read timeout, a connection per thread."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"total_max_attempts": 1},
        read_timeout=timeout_s,
        connect_timeout=min(timeout_s, 10.0),
        max_pool_connections=THREADS,
        user_agent_extra="rubricflow",
    )
    return boto3.session.Session().client("bedrock-runtime", region_name=region(), endpoint_url=url, config=config)


@functools.cache
def _threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="bedrock")
