import pytest
from pydantic import ValidationError

from rubricflow.rubrics.model import BinaryScale, NominalScale, NumericScale, OrdinalScale, ScaleError


def test_binary_maps_labels_and_rejects_others():
    s = BinaryScale(labels=("absent", "present"), scores=(0.0, 1.0))
    assert s.unit(1) == 1.0 and s.unit("absent") == 0.0 and s.unit(True) == 1.0
    inverted = BinaryScale(scores=(1.0, 0.0))
    assert inverted.unit(1) == 0.0
    for bad in (2, -1, "maybe", 0.5, None):
        with pytest.raises(ScaleError):
            s.unit(bad)


def test_ordinal_unit_uses_range_not_anchor_count():
    s = OrdinalScale(anchors=[{"value": 1, "description": "x"}, {"value": 5, "description": "y"}])
    assert s.domain() == [1, 2, 3, 4, 5]
    assert s.unit(1) == 0.0 and s.unit(3) == 0.5 and s.unit(5) == 1.0 and s.unit("4") == 0.75
    for bad in (0, 6, 2.5, "high", True):
        with pytest.raises(ScaleError):
            s.unit(bad)
    assert s.json_schema() == {"type": "integer", "minimum": 1, "maximum": 5, "enum": [1, 2, 3, 4, 5]}


def test_ordinal_rejects_bad_definitions():
    with pytest.raises(ValidationError, match="duplicate anchor"):
        OrdinalScale(anchors=[{"value": 1}, {"value": 1}])
    with pytest.raises(ValidationError, match="outside"):
        OrdinalScale(anchors=[{"value": 1}, {"value": 9}], max=5)


def test_nominal_scores_categories():
    s = NominalScale(categories=[{"value": "A", "score": 1.0}, {"value": "B", "score": 0.25}, {"value": "C"}])
    assert s.unit("B") == 0.25 and s.unit("C") is None
    with pytest.raises(ScaleError):
        s.unit("D")
    assert s.json_schema()["enum"] == ["A", "B", "C"]


def test_numeric_range_and_step():
    s = NumericScale(min=0, max=10, step=0.5)
    assert s.unit(7.5) == 0.75
    for bad in (10.5, -1, 7.3, "nan", float("inf"), True):
        with pytest.raises(ScaleError):
            s.unit(bad)
    with pytest.raises(ValidationError):
        NumericScale(min=3, max=3)
