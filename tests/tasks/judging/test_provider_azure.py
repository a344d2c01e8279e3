"""Azure OpenAI's deployment route (`--provider azure`): the path names the deployment, the version
is the `api-version` query parameter, the key goes in an `api-key` header. Tested over real HTTP
against a stand-in written from Azure's reference (tasks/standins/azure_api.py), which answers a
request without the version or with the key elsewhere as Azure does (404 / 401)."""

import pytest

from rubricflow.tasks.judging.chat import ModelCallFailed, ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

KEY = "azure-canary-key-5e0c41b7d29a"
MESSAGES = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Hi"}]


def _deployment_url(server) -> str:
    return server.base_url.removesuffix("/v1") + "/openai/deployments/judge-gpt"


def test_a_call_reaches_the_deployment_with_its_version_and_key_header(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2024-10-21")
    with RunningServer(ServerConfig(api_key=KEY)) as server:
        answer = ask(JudgeConfig(provider="azure", base_url=_deployment_url(server), model="judge-gpt"), MESSAGES)
        assert answer.strip() and server.app.stats.answered == server.app.stats.requests == 1  # taken at once


def test_the_openai_wire_shape_is_refused_there_as_azure_refuses_it(monkeypatch):
    """Without the azure provider (Bearer key, no api-version) the same URL fails: the stand-in is
    strict, so the test above proves the shape."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with RunningServer(ServerConfig(api_key=KEY)) as server:
        with pytest.raises(ModelCallFailed, match="404.*Resource not found"):
            ask(JudgeConfig(base_url=_deployment_url(server), model="judge-gpt"), MESSAGES)


def test_a_wrong_key_is_azures_401_in_one_scrubbed_line(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-wrong-key-0000")
    with RunningServer(ServerConfig(api_key=KEY)) as server:
        with pytest.raises(ModelCallFailed, match="401.*Access denied") as failed:
            ask(JudgeConfig(provider="azure", base_url=_deployment_url(server), model="judge-gpt"), MESSAGES)
    assert "azure-wrong-key-0000" not in str(failed.value)
