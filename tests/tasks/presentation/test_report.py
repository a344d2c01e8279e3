"""Reports render text from users' rubrics as written."""

import re

import numpy as np
import pytest

from rubricflow.tasks.presentation.report import _heatmap


def test_a_dollar_sign_in_a_criterion_title_is_text_not_math():
    """F17: `$` in a criterion title broke `compare --report` and `calibrate --report` (matplotlib
    read "$\\PATH$" as TeX and raised "Unknown symbol")."""
    labels = ["Names $\\PATH$ as written", "Costs $x^$ a month"]  # not valid math if read as math
    html = _heatmap(np.eye(2), labels, labels, "Shell $\\vars$ and $5 prices", "judge", "human")
    assert html.startswith("<img") or "data:image/png;base64," in html


@pytest.mark.parametrize(
    "hostile",
    [
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        "<javascript:alert(1)>",
        "**bold** `code` ~~gone~~ _em_",
        "a | b\nnew | row",
    ],
)
def test_a_value_in_a_markdown_artifact_renders_as_written(hostile):
    """F26: texts, rationales, labels and ids reached Prefect's artifacts as live Markdown and HTML."""
    from markdown_it import MarkdownIt  # CommonMark with GFM tables and strikethrough, as Prefect's UI renders

    from rubricflow.tasks.presentation.tables import md_table, md_text

    markdown = MarkdownIt("commonmark").enable(["table", "strikethrough"])

    table = md_table([{"label": hostile, "n": 1}])
    assert len(table.strip().splitlines()) == 3  # one row: no cell or line broken out of the table
    for source in (md_text(hostile), table):
        rendered = markdown.render(source)
        assert "<img" not in rendered and "<a " not in rendered and "<strong>" not in rendered
        assert "<code>" not in rendered and "<em>" not in rendered and "<s>" not in rendered
        shown = html_unescape(re.sub(r"<[^>]+>", "", rendered))
        assert " ".join(hostile.split("\n")) in shown  # what the text says, as it says it


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


def plot_titles(monkeypatch) -> list[str]:
    """The titles of every plot a report draws, as they reach the page's images."""
    from rubricflow.tasks.presentation import report

    titles: list[str] = []
    draw = report._figure

    def kept(fig) -> str:
        titles.extend(ax.get_title() for ax in fig.axes)
        return draw(fig)

    monkeypatch.setattr(report, "_figure", kept)
    return titles


def test_an_undefined_correlation_in_a_plot_title_reads_n_a(monkeypatch):
    """An outside probe: the calibration report's scatter titles said "r=nan" where its table, the CLI
    and the viewer say n/a (a judge who gave every text one score has no correlation)."""
    from rubricflow.tasks.presentation.report import calibration_report
    from rubricflow.tasks.stats.agreement import rater_agreement
    from rubricflow.tasks.stats.calibration import Calibration

    texts = [f"t{i}" for i in range(6)]
    humans = {"ann": [1, 2, 3, 4, 5, 2], "bob": [1, 3, 3, 5, 4, 2]}
    scores = {
        c: {
            "J": dict(zip(texts, judge, strict=True)),
            **{h: dict(zip(texts, s, strict=True)) for h, s in humans.items()},
        }
        for c, judge in (("flat", [3] * 6), ("varied", [1, 2, 4, 4, 5, 3]))
    }
    rows = rater_agreement(scores, "J", ["ann", "bob"])
    titles = plot_titles(monkeypatch)
    page = calibration_report(Calibration("c", "J", ["ann", "bob"], 1.0, rows))
    assert "flat (r=n/a)" in titles and f"varied (r={rows[1].pearson:.3f})" in titles, titles
    assert "nan" not in " ".join(titles) and "<td" in page
