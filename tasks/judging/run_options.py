"""Run-wide settings: how one scoring run plans and pages its work, as one typed value.

A new run-wide setting is one field here (with its docstring) and the one place that uses it:
the command-line option of every command that scores (rubricflow/cli/judge_options.run_options),
the flow parameter (`options`, validated once by Prefect), the Python API (`Warehouse.score(...,
FIELD=...)`), the run's recorded parameters and Prefect's parameter schema all follow from it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class RunOptions(BaseModel):
    """What a scoring run does with its plan, beside which judge it asks (JudgeConfig)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    shard_size: int = 2000
    """Cells per shard: the unit that lands at once (what a killed run loses at most)."""
    skip_disqualified: bool = False
    """Skip texts a pattern disqualifier already fails."""
    max_cells: int | None = Field(default=None, ge=1)
    """Judge at most this many cells this run; the rest stay planned for the next run (a trial run,
    a daily cap)."""
    layout: Literal["auto", "rubric-first", "text-first"] = "auto"
    """The prompts' cache layout: the rubric unit as the prefix its texts share (rubric-first), or the
    text as the prefix its criteria share (text-first); auto picks the cheaper from token counts."""

    @field_validator("shard_size")
    @classmethod
    def _at_least_one(cls, cells: int) -> int:
        if cells < 1:  # 0 cells per shard would never finish planning
            raise ValueError(f"--shard-size must be at least 1 cell, not {cells}")
        return cells
