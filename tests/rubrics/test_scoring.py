import pytest

from rubricflow.rubrics.scoring import verdict

from .factories import rubric


def three(method, **extra):
    """Criteria a (binary), b (ordinal 1..5), c (binary) under one root with `method`."""
    return rubric(
        criteria=[
            {"id": "a", "weight": 1, "points": 4},
            {"id": "b", "weight": 3, "scale": {"kind": "ordinal", "anchors": [{"value": 1}, {"value": 5}]}},
            {"id": "c", "weight": 1, "points": -2},
        ],
        scoring={"method": method, **extra},
    )


VALUES = {"a": 1, "b": 4, "c": 0}  # units: 1.0, 0.75, 0.0


@pytest.mark.parametrize(
    "method, expected",
    [
        ("weighted_mean", (1.0 + 3 * 0.75 + 0.0) / 5),
        ("weighted_sum", 1.0 + 3 * 0.75 + 0.0),
        ("min", 0.0),
        ("max", 1.0),
        ("all", 0.0),
        ("any", 1.0),
        ("points", 4 / 4),
    ],
)
def test_each_aggregation(method, expected):
    assert verdict(three(method), VALUES).score == pytest.approx(expected)


def test_points_negative_items_subtract_and_clip():
    r = three("points")
    assert verdict(r, {"a": 1, "b": 1, "c": 1}).score == pytest.approx((4 - 2) / 4)
    assert verdict(r, {"a": 0, "b": 1, "c": 1}).score == 0.0  # clipped at 0


def test_unscored_is_left_out_never_zero():
    v = verdict(three("weighted_mean"), {"a": 1, "b": None, "c": None})
    assert v.score == 1.0 and v.coverage == pytest.approx(1 / 3)
    assert verdict(three("weighted_mean"), {}).score is None


def test_nested_groups_weighted():
    r = rubric(
        criteria=[{"id": "x"}, {"id": "y"}, {"id": "z"}],
        groups=[
            {"id": "inner", "children": ["x", "y"], "aggregation": "min", "weight": 3},
            {"id": "root", "children": ["inner", "z"]},
        ],
        scoring={"root": "root"},
    )
    # inner = min(1, 0) = 0 with weight 3; z = 1 with weight 1 -> 0.25
    assert verdict(r, {"x": 1, "y": 0, "z": 1}).score == pytest.approx(0.25)


def test_disqualifier_kinds_labels_invert_and_essentials():
    r = rubric(
        criteria=[
            {"id": "a", "importance": "essential"},
            {"id": "b", "scale": {"kind": "ordinal", "anchors": [{"value": 0}, {"value": 4}]}},
        ],
        patterns=[{"id": "p", "regex": "x"}],
        disqualifiers=[
            {"id": "by-pattern", "kind": "pattern", "patterns": ["p"]},
            {"id": "by-floor", "kind": "criterion", "criterion": "b"},
            {"id": "by-judge", "kind": "judge"},
        ],
        scoring={
            "labels": [{"label": "good", "min": 0.7}, {"label": "bad", "min": 0.0}],
            "pass_threshold": 0.5,
            "essential_minimum": 1.0,
        },
    )
    ok = verdict(r, {"a": 1, "b": 3})
    assert (ok.score, ok.label, ok.passed, ok.disqualified) == (pytest.approx(0.875), "good", True, ())
    assert verdict(r, {"a": 1, "b": 0}).disqualified == ("by-floor",)
    assert verdict(r, {"a": 1, "b": 3}, matched_patterns={"p"}).disqualified == ("by-pattern",)
    judged = verdict(r, {"a": 1, "b": 3}, judge_disqualifiers={"by-judge"})
    assert (judged.score, judged.label, judged.passed) == (0.0, "disqualified", False)
    assert verdict(r, {"a": 0, "b": 4}).passed is False  # essential criterion under its minimum
    risk = r.model_copy(update={"scoring": r.scoring.model_copy(update={"invert": True})})
    assert verdict(risk, {"a": 1, "b": 3}).score == pytest.approx(0.125)


def test_genre_activation():
    r = rubric(criteria=[{"id": "a"}, {"id": "news-only", "genre": ["news"]}])
    assert verdict(r, {"a": 1, "news-only": 0}).score == 1.0
    assert verdict(r, {"a": 1, "news-only": 0}, genre="news").score == 0.5


def test_a_mean_exactly_at_a_forge_threshold_passes(tmp_path):
    """Seed 002's thresholds are minimums on 1-5 (`pass_threshold: 3.5`, `essential_minimum`, a
    criterion's `threshold`). Made unit scores by (t - 1) / 4, many were a hair above the same mean's
    score (2.2 -> 0.30000000000000004 against 0.3): every mean an author can write with two decimals
    now passes exactly at its threshold, and one step of the scale below it fails."""
    import itertools
    from fractions import Fraction

    import yaml

    from rubricflow.rubrics.formats import load_rubric

    def forge(n: int, threshold: float) -> object:
        criteria = [
            {
                "name": f"c{i}",
                "description": "d",
                "weight": "essential",
                "threshold": threshold,
                "anchors": {k: f"level {k}" for k in range(1, 6)},
                "examples": {"score_1": "x", "score_5": "y"},
            }
            for i in range(n)
        ]
        doc = {"rubric_id": f"t_{n}", "name": "T", "version": "1.0.0", "artifact_type": "x", "criteria": criteria}
        doc["scoring"] = {"pass_threshold": threshold, "essential_minimum": 1.0}
        path = tmp_path / f"t{n}-{threshold}.yaml"
        path.write_text(yaml.safe_dump(doc))
        return load_rubric(path)

    checked = 0
    for n in range(1, 6):
        for combo in itertools.combinations_with_replacement(range(1, 6), n):
            mean = Fraction(sum(combo), n)
            if Fraction(str(round(float(mean), 2))) != mean:
                continue  # only a threshold an author writes (two decimals)
            r = forge(n, round(float(mean), 2))
            assert verdict(r, dict(zip((f"c{i}" for i in range(n)), combo, strict=True))).passed, combo
            below = (combo[0] - 1, *combo[1:])
            if below[0] >= 1:
                assert verdict(r, dict(zip((f"c{i}" for i in range(n)), below, strict=True))).passed is False
            checked += 1
    assert checked > 60
