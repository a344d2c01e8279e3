"""The viewer's pictures, drawn on the server as SVG: a forest plot puts each row's estimate and
interval where the shared axis says (the reference line at 0 between them when the interval holds
0), a histogram's bars are as tall as their counts, labels are escaped, and the A/B and estimates
pages carry them (rendered through the viewer's own templates, no server)."""

import xml.etree.ElementTree as ET

import pytest

from rubricflow.tasks.presentation import plots
from rubricflow.tasks.presentation.viewer import Pages, estimate_pictures

SVG = "{http://www.w3.org/2000/svg}"


def parsed(markup) -> ET.Element:
    return ET.fromstring(str(markup))


def test_a_forest_plot_places_each_interval_on_one_axis_around_the_reference():
    rows = [plots.Row("<b>c1</b>", -0.2, -0.3, -0.1), plots.Row("c2", 0.05, -0.05, 0.15)]
    svg = parsed(plots.forest(rows, "forest", "B less A"))
    reference = svg.find(f"{SVG}line[@class='reference']")
    zero = float(reference.get("x1"))
    lines = svg.findall(f"{SVG}line[@class='interval']")
    dots = svg.findall(f"{SVG}circle[@class='estimate']")
    assert len(lines) == len(dots) == 2
    first, second = ((float(ln.get("x1")), float(ln.get("x2"))) for ln in lines)
    assert first[0] < float(dots[0].get("cx")) < first[1] < zero  # all of c1's interval left of 0
    assert second[0] < zero < second[1]  # c2's holds 0
    step = (second[1] - second[0]) / 0.2  # pixels per unit, the same on every row
    assert first[1] - first[0] == pytest.approx(0.2 * step, rel=1e-3)
    assert [t.text for t in svg.findall(f"{SVG}text")][0] == "<b>c1</b>"  # escaped in the markup, text here
    assert "<b>" not in str(plots.forest(rows, "forest", "x"))
    assert plots.forest([], "forest", "nothing") == ""


def test_a_histogram_draws_bars_as_tall_as_their_counts():
    svg = parsed(plots.histogram([(-0.1, 0.0, 3), (0.0, 0.1, 6), (0.1, 0.2, 0)], "deltas", "B less A"))
    bars = svg.findall(f"{SVG}rect[@class='bar']")
    assert len(bars) == 2  # an empty bin draws nothing
    assert float(bars[1].get("height")) == pytest.approx(2 * float(bars[0].get("height")))
    zero = float(svg.find(f"{SVG}line[@class='reference']").get("x1"))
    assert float(bars[1].get("x")) == pytest.approx(zero)  # the bin starting at 0 starts at the line


ESTIMATES = [  # two sides' pass rates and their error difference, as view_estimates.sql gives them
    {"rater": "ann", "side": side, "rubric_id": "r", "version": "1", "judge_hash": "j" * 16, "plan_id": None,
     "criterion_id": "overall", "figure": figure, "confidence": 0.9, "n_labels": 10, "n_texts": 40,
     "judge_only": 0.5, "labels_only": value, "labels_low": value - 0.2, "labels_high": value + 0.1,
     "powered": None if side == "A-B" else value, "powered_low": None if side == "A-B" else value - 0.1,
     "powered_high": None if side == "A-B" else value + 0.1, "effective_labels": None, "better": "A",
     "estimated_at": None}
    for side, figure, value in (("A", "pass_rate", 0.6), ("B", "pass_rate", 0.3), ("A-B", "error", -0.5))
]  # fmt: skip


def test_the_estimates_page_shows_the_agreement_forest_and_the_pass_rates(tmp_path):
    pictures = estimate_pictures(ESTIMATES)
    gaps = parsed(pictures["gaps"])
    assert len(gaps.findall(f"{SVG}line[@class='interval']")) == 1  # the A-B row only
    assert len(parsed(pictures["rates"]).findall(f"{SVG}circle[@class='estimate']")) == 2
    page = Pages(tmp_path / "w.duckdb").page("estimates.html", corpus="c", rows=ESTIMATES, pictures=pictures)
    body = page.body.decode()
    assert (
        '<figure id="agreement"><svg class="forest"' in body and '<figure id="rates"><svg class="forest rates"' in body
    )
