"""Secrets never reach the warehouse: texts from an endpoint or an exception are scrubbed, and a
base URL that carries credentials is refused before it could become a stored parameter."""

import pytest

from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.secrets import REDACTED, configured_keys, scrub


@pytest.mark.parametrize(
    "text",
    [
        "headers were: authorization: Bearer sk-live-0123456789abcdef; host: 127.0.0.1",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        '{"api_key": "abcdef123456"}',
        "x-api-key=abcdef123456&model=x",
        "key sk-proj-ABCDEFGHIJKLMNOP in the middle",
    ],
)
def test_credential_shaped_strings_are_redacted(text):
    cleaned = scrub(text)
    assert REDACTED in cleaned
    for secret in ("sk-live-0123456789abcdef", "dXNlcjpwYXNzd29yZA==", "abcdef123456", "sk-proj-ABCDEFGHIJKLMNOP"):
        assert secret not in cleaned


def test_the_configured_key_is_redacted_whatever_its_shape(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "plain-looking-token-42")
    assert (
        scrub("the server said plain-looking-token-42 twice: plain-looking-token-42")
        == f"the server said {REDACTED} twice: {REDACTED}"
    )


def test_keys_read_once_are_what_many_texts_are_scrubbed_of(monkeypatch):
    """rf.Judge reads the environment's keys once for a batch of results (18 variables read for
    each text was ~10% of the reward server's CPU); a text scrubbed without them reads them then."""
    monkeypatch.setenv("OPENAI_API_KEY", "plain-looking-token-42")
    monkeypatch.setenv("GROQ_API_KEY", "short")  # under 6 characters: not a key to scrub
    keys = configured_keys()
    assert "plain-looking-token-42" in keys and "short" not in keys
    monkeypatch.setenv("OPENAI_API_KEY", "rotated-token-0007")
    said = "old plain-looking-token-42, new rotated-token-0007"
    assert scrub(said, keys) == f"old {REDACTED}, new rotated-token-0007"
    assert scrub(said) == f"old plain-looking-token-42, new {REDACTED}"


def test_ordinary_text_is_left_alone():
    text = "The reply is correct; the key point (a budget of 7 to 2) is quoted. Tokens: 120."
    assert scrub(text) == text and scrub(None) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://user:pw@127.0.0.1:8000/v1",
        "http://token@127.0.0.1/v1",
        "https://proxy.example/v1?api_key=abc123",
        "http://127.0.0.1/v1?key=abc&x=1",
    ],
)
def test_a_base_url_with_credentials_is_refused(url):
    with pytest.raises(ValueError, match="carries credentials"):
        JudgeConfig(base_url=url)


def test_a_plain_base_url_is_fine():
    assert JudgeConfig(base_url="http://127.0.0.1:8765/v1?region=eu").base_url.endswith("region=eu")


def test_a_key_shaped_value_under_any_name_in_the_base_url_is_refused():
    """`?q=sk-proj-...` was stored in the run's parameters: the name is no credential's, the value is one."""
    with pytest.raises(ValueError, match="a value shaped like a key"):
        JudgeConfig(base_url="http://127.0.0.1:8765/v1?q=sk-proj-abcdefghijklmnop0123")


def test_the_key_is_not_in_a_judges_attributes_or_repr(monkeypatch):
    """`vars(judge)` showed the raw key: the engines a Judge keeps were keyed by the client's key."""
    import rubricflow as rf

    canary = "sk-rubricflow-canary-vars-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    with rf.Judge.offline() as judge:
        judge.evaluate("llm-slop", "The council approved the road budget by seven votes to two.")
        assert judge._engines  # what it keeps was built
        assert canary not in repr(vars(judge)) and canary not in repr(judge)


def test_the_quick_word_check_skips_only_texts_the_credential_search_would_pass():
    """The ASCII prefilter of `scrub` (#55) must never skip a text the case-insensitive search
    finds something in: every spelling of every word, in any case, in and around prose."""
    import itertools

    from rubricflow.tasks.judging.secrets import _MAYBE, _maybe_credential

    words = ["Bearer", "BASIC", "api_key", "Api-Key", "apikey", "AUTHORIZATION", "access-token", "Secret", "SK-"]
    texts = ["plain prose, 43 words and pattern hits.", "a rapid appraisal", "ſecret", "\u212aey: sk-abc"]
    texts += [f"{a} {w} {b}" for w, (a, b) in itertools.product(words, [("", ""), ("the", "is here"), ("x", "")])]
    for text in texts:
        assert _maybe_credential(text) == bool(_MAYBE.search(text)), text
    assert "abcdefghijkl" not in scrub("Authorization: Bearer abcdefghijkl")
    assert scrub("plain prose, 43 words and pattern hits.") == "plain prose, 43 words and pattern hits."
