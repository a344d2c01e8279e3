"""Evidence citing a transcript's message ([M3] words) is verified against that message (#51)."""

from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.render import CallUnit
from rubricflow.tasks.judging.verify import quotes_in_text, verify_answer
from rubricflow.tasks.loaders.transcripts import transcript_of

RENDERING = transcript_of(
    "t",
    [
        {"role": "user", "content": "Book me a flight to Paris"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "search", "arguments": '{"to": "Paris"}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "AF123 at 10:00"},
        {"role": "assistant", "content": "I found AF123 at 10:00."},
    ],
).rendering


def test_a_quote_is_checked_in_the_message_it_cites():
    assert quotes_in_text(["[M3] I found AF123"], RENDERING) is True
    assert quotes_in_text(["[M2]: AF123 at  10:00"], RENDERING) is True  # a colon and spacing are allowed
    assert quotes_in_text(["[M1] call search"], RENDERING) is True  # a tool call is part of its message


def test_the_right_words_in_another_message_are_a_false_quote():
    assert quotes_in_text(["[M0] I found AF123"], RENDERING) is False  # in M3, not in M0
    assert quotes_in_text(["[M9] Paris"], RENDERING) is False  # no such message
    assert quotes_in_text(["[M3]"], RENDERING) is False  # a citation with no words proves nothing


def test_an_uncited_quote_and_a_plain_text_are_checked_as_before():
    assert quotes_in_text(["Book me a flight"], RENDERING) is True
    assert quotes_in_text(["[M1] a note"], "a plain text that says [M1] a note") is True


def test_a_false_cited_quote_is_flagged_like_any_false_quote():
    rubric = Rubric.model_validate(
        {"metadata": {"id": "r"}, "goal": "g", "criteria": [{"id": "booked", "description": "d"}]}
    )
    answer = {"criteria": {"booked": {"value": 1, "rationale": "r", "evidence": ["[M0] I found AF123"]}}}
    [result], _, _ = verify_answer(rubric, CallUnit("booked", ("booked",)), answer, RENDERING)
    assert result.evidence_verified is False
    assert "evidence quote not found in the text" in result.warnings
