"""Small rubric builders for tests."""

from rubricflow.rubrics.model import Rubric


def rubric(**overrides) -> Rubric:
    data = {
        "metadata": {"id": "t-rubric", "version": "1.0.0"},
        "goal": "Judge test texts.",
        "criteria": [
            {"id": "a", "description": "first", "scale": {"kind": "binary"}},
            {
                "id": "b",
                "description": "second",
                "scale": {
                    "kind": "ordinal",
                    "anchors": [
                        {"value": 1, "description": "low"},
                        {"value": 3, "description": "mid"},
                        {"value": 5, "description": "high"},
                    ],
                },
            },
        ],
    }
    data.update(overrides)
    return Rubric.model_validate(data)
