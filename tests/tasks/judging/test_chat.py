"""The model paths besides judging (reflection, drafting) share the judge's hardening, against the
offline judge server over real HTTP: N2 (a key echoed by the endpoint reached the terminal) and N5
(text/plain bodies, `message: null`, no choices and content parts crashed them; a slow drip hung
`rubric generate`)."""

import pytest

from rubricflow.tasks.judging.chat import ModelCallFailed, ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.prompts import GENERATE_MARK
from rubricflow.tasks.judging.verify import AnswerError
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

KEY = "sk-canary-chat-0123456789abcdef"
MESSAGES = [
    {"role": "system", "content": f"{GENERATE_MARK} from the source document. Use metadata.id 'house'."},
    {"role": "user", "content": "<<<BEGIN SOURCE x>>>\n- Every number cites its source.\n<<<END SOURCE x>>>"},
]


def asked(fault: str | None, attempts: int = 99, **config) -> str:
    server_config = ServerConfig(fault_rate=1.0, faults=(fault,), fault_attempts=attempts) if fault else ServerConfig()
    with RunningServer(server_config) as server:
        return ask(JudgeConfig(base_url=server.base_url, **config), MESSAGES)


@pytest.fixture(autouse=True)
def planted_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_an_answer_without_usable_text_is_an_answer_error_not_a_traceback():
    with pytest.raises(AnswerError) as caught:
        asked("empty")
    assert caught.value.kind == "empty"


@pytest.mark.parametrize("fault", ["message_null", "text_plain", "html_page"])
def test_a_200_that_is_no_chat_completion_is_retried_like_a_5xx(fault):
    """F30 on the reflection and drafting path: a gateway's page is retried, then said in one line."""
    assert '"criteria"' in asked(fault, attempts=1)
    with pytest.raises(ModelCallFailed, match="not a chat completion|has no message"):
        asked(fault, max_attempts=2)


def test_content_parts_and_transient_errors_still_give_the_answer():
    assert '"criteria"' in asked("content_parts")
    assert '"criteria"' in asked("503", attempts=2)  # retried like a judge call


def test_an_endpoint_that_echoes_the_key_never_shows_it():
    answer = asked("echo_headers")
    assert KEY not in answer and "[redacted]" in answer


@pytest.mark.slow  # real back-off waits and timeouts: seconds each
def test_a_slow_drip_ends_at_the_whole_answer_deadline():
    with pytest.raises(ModelCallFailed, match="no complete answer within 1 s") as caught:
        asked("slow_drip", timeout_s=1, max_attempts=1)
    assert KEY not in str(caught.value)


@pytest.mark.slow  # real back-off waits and timeouts: seconds each
def test_a_slow_drip_ends_at_the_calls_total_deadline_not_attempts_times_the_timeout():
    """G16: six attempts of a 1 s timeout against a server that drips every answer took 6 x 2 s plus the
    back-off waits; the call's deadline (2.5 s here) holds over all of them together."""
    import time

    config = ServerConfig(fault_rate=1.0, faults=("slow_drip",), fault_attempts=99)
    with RunningServer(config) as server:
        started = time.monotonic()
        with pytest.raises(ModelCallFailed, match="gave no answer"):
            ask(JudgeConfig(base_url=server.base_url, timeout_s=1, max_attempts=6, call_deadline_s=2.5), MESSAGES)
        took = time.monotonic() - started
        assert (
            took < 8 and server.app.stats.requests <= 3
        )  # attempts x timeout: >= 12 s, (took, server.app.stats.requests)


def test_system_prompt_user_puts_the_system_message_at_the_head_of_the_user_turn():
    """A chat template without a system role (Gemma's on llama.cpp) drops the system message, and with
    it a refine proposal's answer format: --system-prompt user sends it in the user turn instead."""
    from rubricflow.tasks.judging.chat import delivered

    (only,) = delivered(MESSAGES, "user")
    assert only == {"role": "user", "content": f"{MESSAGES[0]['content']}\n\n{MESSAGES[1]['content']}"}
    assert delivered(MESSAGES, "auto") == delivered(MESSAGES, "system") == MESSAGES


def test_system_prompt_auto_finds_a_template_that_drops_the_system_role_as_the_judge_does():
    """--system-prompt auto (the default) on a server whose template drops system messages: the first
    call runs the judge's delivery check (tasks/judging/delivery.py, two one-token probes), the
    system text goes in the user turn, and the drafting prompt reaches the model (before, it was
    dropped and the server answered a judgment). The finding is kept: a second call probes no more."""
    from rubricflow.tasks.judging.chat import LAYOUTS
    from rubricflow.tasks.judging.verify import parse_json_answer

    with RunningServer(ServerConfig(drop_system=True)) as server:
        config = JudgeConfig(base_url=server.base_url)
        for _ in range(2):
            draft = parse_json_answer(ask(config, MESSAGES))
            assert draft.get("metadata", {}).get("id") == "house", draft  # a draft rubric, not a judgment
        assert server.app.stats.probes == 2 and server.app.stats.requests == 2
        assert LAYOUTS[(config.provider, config.resolved_base_url(), config.model)] == "user"
    with RunningServer(ServerConfig()) as server:  # a template with a system role keeps it there
        config = JudgeConfig(base_url=server.base_url)
        assert parse_json_answer(ask(config, MESSAGES))["metadata"]["id"] == "house"
        assert LAYOUTS[(config.provider, config.resolved_base_url(), config.model)] == "system"
