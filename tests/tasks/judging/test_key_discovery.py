"""API keys discovered from the providers' usual environment variables (seed 001's table), chosen
by the endpoint's host, never stored: not in the judge's settings, its repr, results or logs."""

import re

import pytest

import rubricflow as rf
from rubricflow.tasks.judging.providers import client_for, key_variables
from rubricflow.tasks.judging.providers.keys import HOST_KEYS, key_variable_for
from rubricflow.tasks.judging.secrets import scrub
from tests.conftest import SHARED

SEED = next((SHARED.parent / "seeds").glob("001_*.txt"))
CANARY = "sk-engine-canary-3e9d1f7a5b2c4d6e"


def seed_key_table() -> dict[str, str]:
    """Provider -> variable, as seed 001's 'API Keys' table lists them."""
    text = SEED.read_text(encoding="utf-8")
    return dict(re.findall(r"^\| (\w[\w ]*?) \| `([A-Z_]+)` \|$", text, re.M))


def test_every_variable_of_the_seeds_table_is_discovered_and_scrubbed():
    table = seed_key_table()
    assert len(table) == 12 and table["Groq"] == "GROQ_API_KEY" and table["HuggingFace"] == "HF_TOKEN"
    assert set(table.values()) == set(HOST_KEYS.values())
    assert set(table.values()) <= set(key_variables())


@pytest.mark.parametrize(
    ("base_url", "variable"),
    [
        ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        ("https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
        ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        ("https://router.huggingface.co/v1", "HF_TOKEN"),
        ("https://api.x.ai/v1", "XAI_API_KEY"),
        ("http://127.0.0.1:8080/v1", "OPENAI_API_KEY"),  # a local server: the wire API's own variable
        ("https://notopenrouter.ai/v1", "OPENAI_API_KEY"),  # a look-alike host is not the provider
        (None, "OPENAI_API_KEY"),
    ],
)
def test_the_endpoints_host_chooses_the_variable(base_url, variable):
    assert key_variable_for(base_url, "OPENAI_API_KEY") == variable


def test_the_client_reads_the_discovered_key_and_scrubbing_removes_it(monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", CANARY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert client_for("openai", "https://api.groq.com/openai/v1", 5).api_key == CANARY
    assert client_for("openai", "http://127.0.0.1:9/v1", 5).api_key != CANARY
    assert scrub(f"401: bad key {CANARY} given") == "401: bad key [redacted] given"
    judge = rf.Judge(base_url="https://api.groq.com/openai/v1", model="llama-3.3-70b-versatile")
    assert CANARY not in repr(judge) and CANARY not in judge.config.model_dump_json()
    assert "key" not in " ".join(judge.settings)


@pytest.mark.slow
def test_a_local_server_that_requires_the_key_gets_it_from_the_environment(monkeypatch, thread_judge_server):
    monkeypatch.setenv("ENGINE_CANARY", CANARY)
    server = thread_judge_server(api_key=CANARY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(rf.EndpointRefused, match="401") as refused:  # a setup no retry fixes raises, as score does
        rf.Judge(base_url=server.base_url, answer_retries=0).evaluate("llm-slop", "A plain sentence.")
    assert CANARY not in str(refused.value)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    r = rf.Judge(base_url=server.base_url).evaluate("llm-slop", "A plain sentence.")
    assert r.score is not None and not r.errors and CANARY not in repr(r) + r._repr_html_()
