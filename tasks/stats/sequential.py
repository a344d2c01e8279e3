"""An anytime-valid confidence sequence for a paired A/B difference, and the decision it supports.

Why: a fixed-sample interval is valid only at the sample size chosen in advance; looking after
every batch and stopping when it excludes 0 inflates the error rate far above alpha. A confidence
sequence holds at every sample size at once (P(the mean ever leaves it) <= alpha), so a comparison
may stop at any look, or be continued later, and its interval is still valid.

The sequence is the hedged-capital betting CS of Waudby-Smith & Ramdas (JRSSB 2024, "Estimating
means of bounded random variables by betting", Theorem 3, predictable plug-in bets, truncation
c = 1/2), over a grid of candidate means. Differences in [-1, 1] are mapped to [0, 1]. Written here
because no maintained library can be the dependency: `confseq` has no wheel (it builds C++ against
Boost), `expectation` needs Python >= 3.12, `sequential-analysis` is AGPL-3.0.
tests/tasks/stats/test_sequential.py checks it against the paper's formulas evaluated all at once, against
scipy's fixed-n t interval (a sequence is never narrower), by simulated coverage, and against
`sequential-analysis`'s betting sequence (a dev-only test oracle).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

GRID = 1000  # candidate means in [0, 1]: the bounds' resolution is 1/GRID on [0, 1], 2/GRID on [-1, 1]
CHUNK = 256  # observations whose capitals are computed at once (CHUNK x GRID doubles)
TRUNCATION = 0.5  # bets never risk more than half the capital (the paper's c)


@dataclass
class ConfidenceSequence:
    """The running (intersected) confidence sequence for the mean of observations in [-1, 1].
    `update` adds observations in order; `lower` / `upper` hold after any number of them."""

    alpha: float
    grid: np.ndarray = field(default_factory=lambda: (np.arange(GRID) + 0.5) / GRID)
    n: int = 0
    total: float = 0.0  # sum of the mapped observations
    squares: float = 0.0  # sum of squared deviations from the running predictable mean
    log_up: np.ndarray | None = None  # log capital betting the mean is above each grid point
    log_down: np.ndarray | None = None
    lower: float = -1.0
    upper: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")
        self.log_up = np.zeros_like(self.grid)
        self.log_down = np.zeros_like(self.grid)

    def update(self, diffs) -> ConfidenceSequence:
        """Add observations (each in [-1, 1]) in order; returns self."""
        values = np.asarray(diffs, dtype=float)
        if values.size and (np.min(values) < -1 - 1e-12 or np.max(values) > 1 + 1e-12):
            raise ValueError("a paired difference outside [-1, 1]")
        mapped = (np.clip(values, -1.0, 1.0) + 1) / 2
        for start in range(0, mapped.size, CHUNK):
            self._bet(mapped[start : start + CHUNK])
        return self

    def _bet(self, x: np.ndarray) -> None:
        """Observations in order: each bet sized by the plug-in the observations before it predict
        (sigma-hat^2_{i-1}), the capital at every step, then the sequence narrowed at each step."""
        assert self.log_up is not None and self.log_down is not None
        i = self.n + 1 + np.arange(x.size)
        means = (0.5 + self.total + np.cumsum(x)) / (i + 1)  # mu-hat_i
        squares = self.squares + np.cumsum((x - means) ** 2)
        variance = (0.25 + np.concatenate([[self.squares], squares[:-1]])) / i  # sigma-hat^2_{i-1}
        size = np.sqrt(2 * math.log(2 / self.alpha) / (variance * i * np.log(i + 1)))[:, None]
        m, step = self.grid[None, :], (x[:, None] - self.grid[None, :])
        up = self.log_up + np.cumsum(np.log1p(np.minimum(size, TRUNCATION / m) * step), axis=0)
        down = self.log_down + np.cumsum(np.log1p(-np.minimum(size, TRUNCATION / (1 - m)) * step), axis=0)
        self.log_up, self.log_down = up[-1], down[-1]
        self.n, self.total, self.squares = int(i[-1]), self.total + float(x.sum()), float(squares[-1])
        kept = np.logaddexp(up, down) + math.log(0.5) < math.log(1 / self.alpha)  # hedged: half on each side
        kept = kept[kept.any(axis=1)]
        if kept.size:  # running intersection over every step: a bound never loosens
            half = 0.5 / self.grid.size
            first, last = kept.argmax(axis=1), self.grid.size - 1 - kept[:, ::-1].argmax(axis=1)
            self.lower = max(self.lower, 2 * (float(self.grid[first].max()) - half) - 1)
            self.upper = min(self.upper, 2 * (float(self.grid[last].min()) + half) - 1)
        if self.lower > self.upper:  # every mean rejected (probability <= alpha): collapse onto the estimate
            self.lower = self.upper = self.estimate

    @property
    def estimate(self) -> float:
        """The mean difference observed so far (0 before any)."""
        return 2 * self.total / self.n - 1 if self.n else 0.0


def decision(lower: float, upper: float, equivalence: float | None) -> str | None:
    """What the interval decides: 'B' (B - A > 0 at every value it keeps), 'A', 'equivalent' (it
    lies inside +-equivalence), or None (undecided: judge more texts)."""
    if lower > 0:
        return "B"
    if upper < 0:
        return "A"
    if equivalence is not None and -equivalence < lower and upper < equivalence:
        return "equivalent"
    return None


def seeded_order(text_ids: list[str], seed: int) -> list[str]:
    """The texts in a random order that the seed alone fixes (the ids are sorted first, so the
    order does not depend on how the warehouse returned them)."""
    ids = sorted(text_ids)
    return [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))]


def run_sequence(
    diffs: list[float], alpha: float, equivalence: float | None, batch: int
) -> tuple[str | None, int, ConfidenceSequence]:
    """Feed the differences in batches, looking after each: (decision, observations used, the
    sequence). Used by the bench on recorded differences; the flow looks the same way."""
    cs = ConfidenceSequence(alpha)
    for start in range(0, len(diffs), batch):
        cs.update(diffs[start : start + batch])
        found = decision(cs.lower, cs.upper, equivalence)
        if found:
            return found, cs.n, cs
    return None, cs.n, cs
