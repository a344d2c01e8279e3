"""Azure OpenAI's deployment route (`--provider azure`): the path names the deployment, the version
is the `api-version` query parameter, the key goes in an `api-key` header. Tested over real HTTP
against a stand-in written from Azure's reference (tasks/standins/azure_api.py), which answers a
request without the version or with the key elsewhere as Azure does (404 / 401)."""

import pytest

from rubricflow.cli.common import judge_settings
from rubricflow.errors import InputError
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


def test_the_resource_endpoint_is_read_as_azures_sdks_read_it(monkeypatch):
    """AZURE_OPENAI_ENDPOINT (the resource) and the model (the deployment) make the deployment's URL."""
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.delenv("AZURE_OPENAI_BASE_URL", raising=False)
    with RunningServer(ServerConfig(api_key=KEY)) as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.base_url.removesuffix("/v1") + "/")
        config = JudgeConfig(provider="azure", model="judge-gpt")
        assert config.resolved_base_url() == _deployment_url(server)
        assert ask(config, MESSAGES).strip() and server.app.stats.answered == 1


def test_no_endpoint_is_one_line_naming_the_variable_not_openais_url(monkeypatch):
    """Before, an Azure judge without a URL sent its Azure key to api.openai.com. Refused where a run
    will call the model (the CLI's judge options; the scoring flow too), not where landed judgments
    are only read (`--no-score`)."""
    for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert judge_settings("judge-gpt", provider="azure") == {"model": "judge-gpt", "provider": "azure"}
    with pytest.raises(InputError) as refused:
        judge_settings("judge-gpt", provider="azure", need_endpoint=True)
    message = str(refused.value)
    assert "AZURE_OPENAI_ENDPOINT" in message and "--base-url" in message and "\n" not in message
    with pytest.raises(InputError, match="AZURE_OPENAI_ENDPOINT"):
        JudgeConfig(provider="azure", model="judge-gpt").check_endpoint()
