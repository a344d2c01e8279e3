"""What `Judge.evaluate` returns: one text's verdict and each criterion's judgment, as objects
with a readable `repr` and an HTML table for notebooks (`_repr_html_`)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CriterionScore:
    """One criterion's judgment: `score` on the unit scale (0..1), `value` as the judge gave it."""

    name: str
    score: float | None
    value: Any = None
    confidence: float | None = None
    rationale: str | None = None
    evidence: tuple[str, ...] = ()
    evidence_verified: bool | None = None
    status: str = "unscored"
    reason: str | None = None
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:
        shown = "unscored" if self.score is None else f"{self.score:.3g} (value {self.value!r})"
        return f"<criterion {self.name}: {shown}>"


@dataclass(frozen=True)
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Result:
    """One text judged in this process (no warehouse): the rubric's verdict by the reference scorer
    (`rubrics/scoring.py`, the specification the warehouse views are tested against)."""

    rubric: str
    text_id: str
    score: float | None
    label: str | None
    passed: bool | None
    disqualifiers: tuple[str, ...]
    criteria: dict[str, CriterionScore]
    usage: Usage
    cost_usd: float | None
    coverage: float
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    risk: float | None = None  # a detection rubric's risk, 1 - score (seed 000: risk = max_score - score); else None

    @property
    def disqualified(self) -> bool:
        return bool(self.disqualifiers)

    def __repr__(self) -> str:
        score = "n/a" if self.score is None else f"{self.score:.3f}"
        verdict = {True: "pass", False: "fail", None: "no verdict"}[self.passed]
        dq = f", disqualified by {', '.join(self.disqualifiers)}" if self.disqualifiers else ""
        parts = ", ".join(
            f"{c.name}={'-' if c.score is None else format(c.score, '.2g')}" for c in self.criteria.values()
        )
        errors = f", {len(self.errors)} errors" if self.errors else ""
        risk = "" if self.risk is None else f" risk {self.risk:.3f}"
        return (
            f"<Result {self.rubric} {self.text_id}: score {score}{risk} {self.label or ''} ({verdict}{dq}) [{parts}]"
            f"{errors}>"
        )

    def _repr_html_(self) -> str:
        head = html.escape(repr(self).strip("<>"))
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(v)}</td>"
                for v in (
                    c.name,
                    "" if c.score is None else f"{c.score:.3f}",
                    "" if c.confidence is None else f"{c.confidence:.2f}",
                    c.rationale or c.reason or "",
                    "; ".join(c.evidence),
                )
            )
            + "</tr>"
            for c in self.criteria.values()
        )
        return (
            f"<div><p>{head}</p><table><tr><th>criterion</th><th>score</th><th>confidence</th>"
            f"<th>rationale</th><th>evidence</th></tr>{rows}</table></div>"
        )

    def as_record(self) -> dict[str, Any]:
        """One flat row: the verdict, then one `<criterion>` score column per criterion (written
        `criterion.<id>` where the id is one of the row's own columns: a criterion `score` took the
        text's score column)."""
        head = {
            "text_id": self.text_id,
            "score": self.score,
            "label": self.label,
            "passed": self.passed,
            "disqualified": self.disqualified,
            "risk": self.risk,
        }
        tail = {
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "errors": "; ".join(self.errors) or None,
        }
        own = head.keys() | tail.keys()
        taken = own | self.criteria.keys()  # a criterion's own id (`criterion.score`) stays its column
        columns = {}
        for name in self.criteria:
            column = name
            while name in own and column in taken:
                column = f"criterion.{column}"
            columns[name], taken = column, taken | {column}
        return head | {columns[name]: c.score for name, c in self.criteria.items()} | tail


class Results(list[Result]):
    """`evaluate_many`'s results in the order of the texts, with a DataFrame view."""

    def to_polars(self) -> Any:
        import polars as pl

        # every row read for the columns (a genre's criterion first judged at row 101 was dropped),
        # the tokens and errors after every criterion's
        frame = pl.DataFrame([r.as_record() for r in self], infer_schema_length=None)
        last: list[str] = [c for c in ("prompt_tokens", "completion_tokens", "errors") if c in frame.columns]
        return frame.select([c for c in frame.columns if c not in last] + last)

    def to_pandas(self) -> Any:
        return self.to_polars().to_pandas()

    @property
    def usage(self) -> Usage:
        return Usage(
            sum(r.usage.calls for r in self),
            sum(r.usage.prompt_tokens for r in self),
            sum(r.usage.completion_tokens for r in self),
        )

    def __repr__(self) -> str:
        scored = [r.score for r in self if r.score is not None]
        mean = f"{sum(scored) / len(scored):.3f}" if scored else "n/a"
        return f"<Results: {len(self)} texts, {len(scored)} scored, mean score {mean}>"

    def _repr_html_(self) -> str:
        return self.to_polars()._repr_html_()
