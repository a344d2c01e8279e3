"""Hypothesis strategies that build valid rubrics with arbitrary text in every free-text field."""

from hypothesis import strategies as st

from rubricflow.rubrics.model import Rubric

text = st.text(max_size=40)
ident = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,12}", fullmatch=True)
unit = st.floats(min_value=0, max_value=1, allow_nan=False)
weight = st.floats(min_value=0.01, max_value=100, allow_nan=False, allow_infinity=False)


@st.composite
def scales(draw):
    kind = draw(st.sampled_from(["binary", "ordinal", "nominal", "numeric"]))
    if kind == "binary":
        return {"kind": "binary", "labels": draw(st.tuples(text, text)), "scores": draw(st.tuples(unit, unit))}
    if kind == "ordinal":
        values = draw(st.lists(st.integers(-5, 10), min_size=2, max_size=5, unique=True))
        return {
            "kind": "ordinal",
            "anchors": [
                {
                    "value": v,
                    "label": draw(text),
                    "description": draw(text),
                    "examples": draw(st.lists(text, max_size=2)),
                }
                for v in values
            ],
        }
    if kind == "nominal":
        values = draw(st.lists(st.text(min_size=1, max_size=10), min_size=2, max_size=4, unique=True))
        return {
            "kind": "nominal",
            "categories": [
                {"value": v, "description": draw(text), "score": draw(st.one_of(st.none(), unit))} for v in values
            ],
        }
    low = draw(st.floats(-1e6, 1e6, allow_nan=False))
    return {
        "kind": "numeric",
        "min": low,
        "max": low + draw(st.floats(0.5, 1e6)),
        "step": draw(st.one_of(st.none(), st.floats(0.01, 10))),
    }


@st.composite
def rubrics(draw) -> Rubric:
    criteria = []
    for cid in draw(st.lists(ident, min_size=1, max_size=4, unique=True)):
        criteria.append(
            {
                "id": cid,
                "title": draw(text),
                "description": draw(text),
                "scale": draw(scales()),
                "weight": draw(weight),
                "importance": draw(st.sampled_from(["essential", "important"])),
                "pass_threshold": draw(st.one_of(st.none(), unit)),
                "genre": draw(st.lists(text, max_size=2)),
                "mechanical_rules": draw(st.lists(text, max_size=2)),
                "notes": draw(text),
                "points": draw(st.one_of(st.none(), st.floats(-10, 10))),
                "tags": draw(st.lists(text, max_size=2)),
                "evidence": {
                    "required": draw(st.booleans()),
                    "max_items": draw(st.one_of(st.none(), st.integers(0, 9))),
                },
            }
        )
    return Rubric.model_validate(
        {
            "metadata": {
                "id": draw(st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,5}){0,2}", fullmatch=True)),
                "version": f"{draw(st.integers(0, 99))}.{draw(st.integers(0, 99))}.{draw(st.integers(0, 99))}",
                "title": draw(text),
                "description": draw(text),
                "tags": draw(st.lists(text, max_size=3)),
                "provenance": draw(
                    st.dictionaries(
                        st.text(max_size=8), st.one_of(text, st.integers(), st.booleans(), st.none()), max_size=3
                    )
                ),
            },
            "goal": draw(text),
            "role": {"persona": draw(text), "obligations": draw(st.lists(text, max_size=2))},
            "criteria": criteria,
            "patterns": [
                {
                    "id": "p",
                    "words": draw(st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=3)),
                    "flags": draw(st.sampled_from(["", "i", "is"])),
                }
            ],
            "definitions": [{"term": draw(st.text(min_size=1, max_size=10)), "meaning": draw(text)}],
            "instructions": draw(st.lists(text, max_size=3)),
            "validation": draw(st.lists(text, max_size=2)),
            "disqualifiers": [{"id": "d1", "description": draw(text)}],
            "output": {
                "constraints": [
                    {
                        "id": "oc",
                        "prefix": draw(st.one_of(st.none(), text)),
                        "max_words": draw(st.one_of(st.none(), st.integers(0, 500))),
                    }
                ],
                "template": draw(text),
            },
            "scoring": {
                "method": draw(st.sampled_from(["weighted_mean", "weighted_sum", "min", "max", "all", "any"])),
                "invert": draw(st.booleans()),
                "labels": [{"label": draw(text), "min": 0.5}],
            },
            "goldens": [
                {
                    "name": draw(st.text(min_size=1, max_size=10)),
                    "output": draw(text),
                    "input": draw(text),
                    "expected": draw(st.sampled_from([None, "pass", "fail"])),
                }
            ],
        }
    )
