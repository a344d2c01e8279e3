"""Pictures the viewer draws on the server as inline SVG (no script, no plotting library): a forest
plot (each row's estimate with its interval against a reference line, the picture a person reads
faster than a table of differences) and a histogram (the paired deltas' distribution). Every label
is escaped; the output is markup a template inserts as it is."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH, LABEL_WIDTH, ROW_HEIGHT, MARGIN = 640, 200, 22, 28


@dataclass(frozen=True)
class Row:
    """One line of a forest plot: its label, estimate and interval (None: the estimate alone)."""

    label: str
    estimate: float
    low: float | None = None
    high: float | None = None


def _scale(low: float, high: float, left: float, right: float):
    """A map from data values to x in [left, right]; a degenerate range is widened by 1."""
    if high <= low:
        low, high = low - 0.5, high + 0.5
    return lambda v: left + (v - low) / (high - low) * (right - left)


def forest(rows: list[Row], css_class: str, axis: str, reference: float | None = 0.0) -> Markup:
    """Each row's estimate (a dot) and interval (a line) on one shared axis, with a dashed line at
    `reference` (no difference; None: no line); empty when there is nothing to draw."""
    rows = [r for r in rows if r.estimate is not None]
    if not rows:
        return Markup("")
    values = [v for r in rows for v in (reference, r.estimate, r.low, r.high) if v is not None]
    x = _scale(min(values), max(values), LABEL_WIDTH, WIDTH - 20)
    height = MARGIN * 2 + ROW_HEIGHT * len(rows)
    parts = [
        f'<svg class="{css_class}" role="img" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(axis)}</title>'
    ]
    if reference is not None:
        parts.append(f'<line class="reference" x1="{x(reference):.2f}" x2="{x(reference):.2f}" y1="{MARGIN - 8}" '
                     f'y2="{height - MARGIN + 8}" stroke="#999" stroke-dasharray="4 3"/>')  # fmt: skip
    for i, row in enumerate(rows):
        y = MARGIN + ROW_HEIGHT * i + ROW_HEIGHT / 2
        parts.append(
            f'<text x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="12">{escape(row.label)}</text>'
        )
        if row.low is not None and row.high is not None:
            parts.append(f'<line class="interval" x1="{x(row.low):.2f}" x2="{x(row.high):.2f}" y1="{y:.1f}" '
                         f'y2="{y:.1f}" stroke="#246" stroke-width="2"/>')  # fmt: skip
        parts.append(f'<circle class="estimate" cx="{x(row.estimate):.2f}" cy="{y:.1f}" r="4" fill="#246"/>')
    parts += _axis(x, min(values), max(values), height, axis)
    return Markup("".join(parts) + "</svg>")


def _axis(x, low: float, high: float, height: int, axis: str) -> list[str]:
    """The bottom axis: its two ends and the reference's value, and its title."""
    base = height - MARGIN + 14
    ends = [f'<text class="tick" x="{x(v):.2f}" y="{base}" text-anchor="middle" font-size="11">{v:.3g}</text>'
            for v in (low, high)]  # fmt: skip
    title = f'<text x="{(LABEL_WIDTH + WIDTH) / 2:.0f}" y="{height - 2}" text-anchor="middle" font-size="11">'
    return ends + [title + f"{escape(axis)}</text>"]


def histogram(bins: list[tuple[float, float, int]], css_class: str, axis: str, reference: float = 0.0) -> Markup:
    """(start, end, count) bins as bars on one axis, a dashed line at `reference`; empty with no count."""
    bins = [b for b in bins if b[2] > 0]
    if not bins:
        return Markup("")
    height, top = 180, max(b[2] for b in bins)
    low, high = min(min(b[0] for b in bins), reference), max(max(b[1] for b in bins), reference)
    x = _scale(low, high, 40, WIDTH - 20)
    plot = height - MARGIN * 2
    parts = [
        f'<svg class="{css_class}" role="img" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(axis)}</title>'
    ]
    for start, end, count in bins:
        tall = plot * count / top
        parts.append(f'<rect class="bar" x="{x(start):.2f}" width="{max(1.0, x(end) - x(start) - 1):.2f}" '
                     f'y="{MARGIN + plot - tall:.2f}" height="{tall:.2f}" fill="#6a9"><title>{start:.3g} to '
                     f'{end:.3g}: {count}</title></rect>')  # fmt: skip
    parts.append(f'<line class="reference" x1="{x(reference):.2f}" x2="{x(reference):.2f}" y1="{MARGIN - 8}" '
                 f'y2="{MARGIN + plot}" stroke="#999" stroke-dasharray="4 3"/>')  # fmt: skip
    parts += _axis(x, low, high, height, axis)
    return Markup("".join(parts) + "</svg>")
