"""Providers that speak through a cloud's own SDK (tasks/judging/providers/bedrock_converse.py:
boto3; vertex_generate.py: google-genai): scoring runs, their credentials and their failures,
against stand-ins written from the APIs' references over real HTTP on 127.0.0.1
(tasks/standins/converse_api.py checks each request's SigV4 signature with botocore's signer;
vertex_api.py issues tokens for a service account's signed assertion, as Google's token endpoint
does). The credentials are made up here; nothing leaves the machine."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

import openai
import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.judging.chat import ModelCallFailed, ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.failures import FailureKind
from rubricflow.tasks.judging.providers import client_for, provider
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from tests.conftest import EXE, rows, write_corpus

pytest.importorskip("boto3")
pytest.importorskip("google.genai")
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402

AWS_SECRET = "aws-secret-canary-9e4c2b7d1a5f3e8c0b6d"
MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"  # a Bedrock model id: the colon is escaped in the signed path
QUESTION = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Hi"}]


def private_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)  # ~0.2 s


def public_pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@pytest.fixture(scope="module")
def service_key():
    return private_key()


@pytest.fixture(scope="module")
def server(service_key):
    # one secret for both APIs' stand-ins: the secret key Bedrock's signatures must be made with,
    # and the public key the token endpoint checks the service account's assertions with
    with RunningServer(ServerConfig(api_key=public_pem(service_key))) as running:
        yield running


@pytest.fixture(scope="module")
def bedrock_server():
    with RunningServer(ServerConfig(api_key=AWS_SECRET)) as running:
        yield running


def root(server) -> str:
    return server.base_url.removesuffix("/v1")


def key_file(path, key: rsa.RSAPrivateKey, token_uri: str):
    """A service account's key file as Google issues it, naming the stand-in's token endpoint."""
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    fields = {"type": "service_account", "project_id": "judges", "private_key_id": "k1", "private_key": pem.decode()}
    fields |= {"client_email": "judge@judges.iam.gserviceaccount.com", "client_id": "1", "token_uri": token_uri}
    path.write_text(json.dumps(fields))
    return path


def aws_env(secret: str = AWS_SECRET) -> dict[str, str]:
    return {"AWS_ACCESS_KEY_ID": "AKIASTANDIN0EXAMPLE", "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": "eu-west-3"}


def google_env(credentials) -> dict[str, str]:
    return {"GOOGLE_APPLICATION_CREDENTIALS": str(credentials), "GOOGLE_CLOUD_PROJECT": "judges"}


@pytest.mark.slow
def test_bedrock_and_vertex_score_from_the_cli_through_their_stand_ins(tmp_path, bedrock_server, server, service_key):
    """~25 s under no load: an ingest and two scoring runs, the SDKs imported by the second and third."""
    write_corpus(tmp_path / "c.jsonl", 6)
    credentials = key_file(tmp_path / "sa.json", service_key, root(server) + "/token")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GOOGLE_", "OPENAI_"))}
    env |= aws_env() | google_env(credentials)
    outputs = []
    for args in (
        ["ingest", "c.jsonl", "-c", "c"],
        ["score", "-c", "c", "-r", "llm-slop", "--provider", "bedrock", "--base-url", root(bedrock_server)],
        ["score", "-c", "c", "-r", "llm-slop", "--provider", "vertex", "--base-url", root(server)],
    ):
        model = ["--model", MODEL if "bedrock" in args else "gemini-2.5-flash"] if "score" in args else []
        result = subprocess.run(
            [EXE, *args, *model, "-w", "w.duckdb"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stderr[-2000:]
        outputs += [result.stdout, result.stderr]
    warehouse = tmp_path / "w.duckdb"
    # 6 cells each, one request a cell, every one signed as its API wants (the stand-ins refuse others)
    assert bedrock_server.app.stats.answered == 6 and server.app.stats.answered == 6
    by_provider = rows(
        warehouse,
        "SELECT json_extract_string(r.parameters, '$.provider'), count(*), count(*) FILTER (WHERE c.status = 'ok'), "
        "min(c.prompt_tokens) > 0, any_value(c.output_mode) FROM completions c JOIN runs r USING (run_id) GROUP BY 1 ORDER BY 1",
    )
    assert by_provider == [("bedrock", 6, 6, True, "json_schema"), ("vertex", 6, 6, True, "json_schema")]
    assert rows(warehouse, "SELECT count(*), min(coverage) FROM text_scores") == [(12, 1.0)]
    assert not any(AWS_SECRET in text for text in outputs)
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != credentials:
            assert AWS_SECRET.encode() not in path.read_bytes(), path


def test_a_wrong_aws_secret_is_bedrocks_403_a_setup_failure_said_in_one_scrubbed_line(monkeypatch, bedrock_server):
    config = JudgeConfig(provider="bedrock", base_url=root(bedrock_server), model=MODEL)
    for name, value in aws_env().items():
        monkeypatch.setenv(name, value)
    assert isinstance(json.loads(ask(config, QUESTION)), dict)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-wrong-secret-000000000000")
    with pytest.raises(
        ModelCallFailed, match="PermissionDeniedError 403.*security token included in the request is invalid"
    ) as failed:
        ask(config, QUESTION)
    assert "aws-wrong-secret-000000000000" not in str(failed.value)

    async def refused() -> BaseException:  # the SDK's ClientError, raised as openai's error of its status
        client = client_for("bedrock", root(bedrock_server), 30)
        with pytest.raises(openai.PermissionDeniedError) as raised:
            await provider("bedrock").post(client, {"model": MODEL, "messages": QUESTION, "max_tokens": 8}, 30)
        await client.close()
        return raised.value

    assert provider("bedrock").classify(asyncio.run(refused())) is FailureKind.SETUP  # planned again once fixed


def test_a_vertex_key_file_the_token_endpoint_refuses_is_one_line_and_no_project_is_refused_first(
    monkeypatch, tmp_path, server, service_key
):
    for name, value in google_env(key_file(tmp_path / "sa.json", service_key, root(server) + "/token")).items():
        monkeypatch.setenv(name, value)
    config = JudgeConfig(provider="vertex", base_url=root(server), model="gemini-2.5-flash")
    assert isinstance(json.loads(ask(config, QUESTION)), dict)
    monkeypatch.setenv(
        "GOOGLE_APPLICATION_CREDENTIALS", str(key_file(tmp_path / "other.json", private_key(), root(server) + "/token"))
    )
    with pytest.raises(ModelCallFailed, match="invalid_grant: Invalid JWT Signature"):
        ask(JudgeConfig(provider="vertex", base_url=root(server), model="gemini-2.0-flash"), QUESTION)  # a new client
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
    with pytest.raises(InputError, match="--provider vertex needs GOOGLE_CLOUD_PROJECT"):
        config.check_endpoint()


def test_a_converse_request_is_a_forced_tool_and_its_answer_reads_back_with_cached_tokens():
    bedrock = provider("bedrock")
    schema = {"type": "object", "properties": {"tone": {"type": "integer"}}, "required": ["tone"]}
    body = {
        "model": MODEL,
        "messages": [{"role": "system", "content": "Judge the tone."}, {"role": "user", "content": "Hello"}],
        "max_tokens": 64,
        "temperature": 0.0,
        "seed": 7,
        "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}},
    }
    request = bedrock.request(body)
    assert request == {
        "modelId": MODEL,
        "messages": [{"role": "user", "content": [{"text": "Hello"}]}],
        "inferenceConfig": {"maxTokens": 64, "temperature": 0.0},  # no seed in Converse
        "system": [{"text": "Judge the tone."}, {"cachePoint": {"type": "default"}}],  # Claude caches the rubric
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "answer", "description": "Give the answer.", "inputSchema": {"json": schema}}}
            ],
            "toolChoice": {"tool": {"name": "answer"}},
        },
    }
    answer = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t1", "name": "answer", "input": {"tone": 3}}}],
            }
        },
        "stopReason": "tool_use",
        "usage": {
            "inputTokens": 10,
            "outputTokens": 5,
            "totalTokens": 15,
            "cacheReadInputTokens": 90,
            "cacheWriteInputTokens": 4,
        },
        "ResponseMetadata": {"RequestId": "req-1", "HTTPStatusCode": 200},
        "modelId": MODEL,
    }
    completion = bedrock.response(answer)
    assert json.loads(completion.choices[0].message.content) == {"tone": 3}
    assert completion.choices[0].finish_reason == "stop" and (completion.id, completion.model) == ("req-1", MODEL)
    assert (completion.usage.prompt_tokens, completion.usage.prompt_tokens_details.cached_tokens) == (104, 90)
    filtered = bedrock.response(
        {**answer, "stopReason": "guardrail_intervened", "output": {"message": {"content": [{"text": "no"}]}}}
    )
    assert filtered.choices[0].finish_reason == "content_filter" and filtered.choices[0].message.refusal == "no"


def test_a_converse_request_marks_the_shared_prefix_with_cache_points_only_where_the_model_caches():
    from rubricflow.rubrics.render import RUBRIC_MARK, arranged

    bedrock = provider("bedrock")
    messages = arranged("Judge.\n## Scale\n1-5\n## Tone\nBe fair.", "<text>Hi</text>", "text-first", "", frozenset())
    sent = bedrock.request({"model": MODEL, "max_tokens": 8, "messages": messages})
    point = {"cachePoint": {"type": "default"}}
    assert sent["system"][-1] == point and all("cachePoint" not in b for b in sent["system"][:-1])
    text_block, cache, rest = sent["messages"][0]["content"]  # the fenced text, then a breakpoint, then the criterion
    assert text_block["text"].endswith("<text>Hi</text>") and cache == point and rest["text"].startswith(RUBRIC_MARK)
    plain = bedrock.request({"model": "meta.llama3-70b-instruct-v1:0", "max_tokens": 8, "messages": messages})
    assert not any("cachePoint" in b for m in plain["messages"] for b in m["content"])
    assert not any("cachePoint" in b for b in plain["system"])  # a model without prompt caching: plain text


def test_their_endpoints_names_and_capabilities_are_their_own(monkeypatch):
    from rubricflow.tasks.judging import telemetry

    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "GOOGLE_VERTEX_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "judges")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    assert provider("bedrock").base_url() == "https://bedrock-runtime.ap-south-1.amazonaws.com"
    assert provider("vertex").base_url() == "https://europe-west4-aiplatform.googleapis.com"
    assert telemetry._endpoint.__wrapped__("bedrock", None, MODEL) == {
        "gen_ai.provider.name": "aws.bedrock",
        "server.address": "bedrock-runtime.ap-south-1.amazonaws.com",
        "server.port": 443,
    }
    assert telemetry._endpoint.__wrapped__("vertex", None, "m")["gen_ai.provider.name"] == "gcp.vertex_ai"
    for name in ("bedrock", "vertex"):
        capabilities = provider(name).capabilities
        assert not capabilities.logprobs and not capabilities.batch and capabilities.system_role == "field"
