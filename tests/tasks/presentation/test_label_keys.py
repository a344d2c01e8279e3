"""The labelling page's keys read as the scale does (#49 item 6: keys counted from 0 made "1" store
2.00 on a 1-5 scale and left "5" answering nothing)."""

import json

from rubricflow.tasks.presentation.labelling import scale_points


def points(low: float, high: float, step: float) -> list[tuple[str, float]]:
    row = {"scale_min": low, "scale_max": high, "unit_step": step, "criterion_id": "c"}
    row["document"] = json.dumps({"criteria": [{"id": "c", "scale": {}}]})
    return [(p.key, p.value) for p in scale_points(row)]


def test_a_whole_point_scale_is_answered_by_its_own_digits():
    assert points(1, 5, 0.25) == [("1", 1.0), ("2", 2.0), ("3", 3.0), ("4", 4.0), ("5", 5.0)]
    assert points(0, 3, 1 / 3) == [("0", 0.0), ("1", 1.0), ("2", 2.0), ("3", 3.0)]
    assert points(1, 10, 1 / 9) == [*((str(v), float(v)) for v in range(1, 10)), ("0", 10.0)]


def test_any_other_scale_is_numbered_from_one_in_order():
    assert points(0, 1, 0.5) == [("1", 0.0), ("2", 0.5), ("3", 1.0)]
    assert points(0, 1, 1) == [("0", 0.0), ("1", 1.0)]  # a binary scale: 0 and 1
