"""Logprob-weighted scores: where the value's token is found, which alternatives count, and
that the weighted score is the distribution's mean over the scale."""

import json
import math
from types import SimpleNamespace

import pytest

from rubricflow.rubrics.model import Anchor, BinaryScale, Category, NominalScale, OrdinalScale
from rubricflow.tasks.judging.logprobs import token_spans, value_offset, weigh

FIVE = OrdinalScale(anchors=(Anchor(value=1), Anchor(value=5)))
TEN = OrdinalScale(anchors=(Anchor(value=1), Anchor(value=10)))


def tokens(*pieces):
    """Token entries as the openai client parses them: a piece is a token, or (token, {alt: p})."""
    out = []
    for piece in pieces:
        token, alternatives = (piece, {piece: 1.0}) if isinstance(piece, str) else piece
        out.append(
            SimpleNamespace(
                token=token,
                logprob=math.log(alternatives[token]),
                top_logprobs=[SimpleNamespace(token=t, logprob=math.log(p)) for t, p in alternatives.items()],
            )
        )
    return token_spans(out)


def test_the_weighted_score_is_the_mean_over_the_scale_values_among_the_alternatives():
    text, spans = tokens(
        '{"criteria": {"clarity": {"value": ',
        ("4", {"4": 0.6, "3": 0.25, "7": 0.1, "x": 0.05}),
        ', "rationale": "ok"}}}',
    )
    w = weigh(FIVE, 4, text, spans, "clarity")
    mass = 0.6 + 0.25  # 7 lies outside 1..5 and x is not a level: neither counts
    assert w.mass == pytest.approx(mass)
    assert w.probs == pytest.approx({"3": 0.25 / mass, "4": 0.6 / mass})
    assert w.unit_score == pytest.approx((0.25 / mass) * FIVE.unit(3) + (0.6 / mass) * FIVE.unit(4))
    assert FIVE.unit(3) < w.unit_score < FIVE.unit(4)


def test_the_value_is_found_after_its_own_criterion_not_in_a_rationale_that_quotes_it():
    answer = {
        "criteria": {
            "economy": {"value": 2, "rationale": 'says "clarity": {"value": 5}'},
            "clarity": {"value": 4, "rationale": ""},
        }
    }
    text = json.dumps(answer)
    assert text[value_offset(text, "clarity")] == "4"
    assert text[value_offset(text, "economy")] == "2"
    bare = '{"criteria": {"clarity": 3}}'  # a bare value instead of an object
    assert bare[value_offset(bare, "clarity")] == "3"
    assert value_offset(bare, "missing") is None


def test_scales_whose_values_share_a_first_token_are_not_weighted():
    """On 1..10, a "1" token may be the start of "10": the alternatives are not values."""
    text, spans = tokens('{"criteria": {"c": {"value": ', ("1", {"1": 0.5, "9": 0.5}), "0}}}")
    assert weigh(TEN, 10, text, spans, "c") is None


def test_a_token_that_is_not_the_sampled_value_gives_no_weighted_score():
    text, spans = tokens('{"criteria": {"c": {"value": ', ("4", {"4": 0.9, "5": 0.1}), "}}}")
    assert weigh(FIVE, 5, text, spans, "c") is None  # the parsed answer says 5: the tokens are not that answer
    assert weigh(FIVE, 4, tokens('{"criteria": {"c": {"value": 4}}}')[0], [], "c") is None  # no logprobs at all


def test_binary_and_nominal_values_split_over_tokens():
    binary = BinaryScale()
    text, spans = tokens('{"criteria": {"b": {"value": ', ("1", {"1": 0.8, "0": 0.2}), "}}}")
    assert weigh(binary, 1, text, spans, "b").unit_score == pytest.approx(0.8)
    nominal = NominalScale(
        categories=(
            Category(value="accept", score=1.0),
            Category(value="reject", score=0.0),
            Category(value="abstain", score=None),
        )
    )
    text, spans = tokens('{"criteria": {"n": {"value": ', '"', ("acc", {"acc": 0.5, "rej": 0.3, "ab": 0.2}), 'ept"}}}')
    w = weigh(nominal, "accept", text, spans, "n")
    assert w.probs == pytest.approx({"accept": 0.5 / 0.8, "reject": 0.3 / 0.8})  # abstain has no score
    assert w.unit_score == pytest.approx(0.5 / 0.8)
