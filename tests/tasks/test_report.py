"""Reports render text from users' rubrics as written."""

import numpy as np

from rubricflow.tasks.presentation.report import _heatmap


def test_a_dollar_sign_in_a_criterion_title_is_text_not_math():
    """F17: `$` in a criterion title broke `compare --report` and `calibrate --report` (matplotlib
    read "$\\PATH$" as TeX and raised "Unknown symbol")."""
    labels = ["Names $\\PATH$ as written", "Costs $x^$ a month"]  # not valid math if read as math
    html = _heatmap(np.eye(2), labels, labels, "Shell $\\vars$ and $5 prices", "judge", "human")
    assert html.startswith("<img") or "data:image/png;base64," in html
