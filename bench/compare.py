"""Bench: the A/B statistics over millions of judgments, against the bare pairing query an
analyst would write by hand over the raw judgments (per-text weighted score under A and B, joined,
mean delta), and against the same statistics asked the old way (every view computed from the raw
rows: bench/unmaterialised_views.sql). Target (#23): the A/B statistics <= 0.1x the bare query.

The data: `--texts` texts x 10 criteria under version A and again under version B (B moves about
a fifth of the levels up by one), so 2 x texts x 10 judgment rows.

    python bench/compare.py [--texts 500000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import Unmaterialised
from views import fill, rubric

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.tasks.stats.compare import compare, compared
from rubricflow.warehouse import analytics, db

BARE = """
WITH s AS (
    SELECT j.rubric_hash, j.text_id, sum(c.weight * j.unit_score) / sum(c.weight) FILTER (WHERE j.unit_score IS NOT NULL) AS score
    FROM judgments j JOIN criteria c USING (rubric_hash, criterion_id)
    GROUP BY ALL
)
SELECT count(*), avg(b.score - a.score), corr(a.score, b.score)
FROM s a JOIN s b ON a.text_id = b.text_id AND a.rubric_hash = $a AND b.rubric_hash = $b
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    a = compile_or_raise(rubric())
    b = compile_or_raise(
        rubric().model_copy(update={"metadata": rubric().metadata.model_copy(update={"version": "2.0.0"})})
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.duckdb"
        t0 = time.perf_counter()
        with db.writer(path) as con:
            fill(con, a, args.texts, run="ra")
            fill(con, b, args.texts, run="rb", shift=2, with_texts=False)
            rebuilt = analytics.rebuild(con)
            con.execute("CHECKPOINT")
        rows = 2 * args.texts * 10
        print(
            f"{rows:,} judgment rows ({args.texts:,} texts x 10 criteria x 2 versions) built in {time.perf_counter() - t0:.1f} s, "
            f"of which materialising the analytics (rubricflow rebuild) {rebuilt:.1f} s"
        )
        best_full = best_bare = best_old = float("inf")
        with db.reader(path) as con:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                con.execute(BARE, {"a": a.hash, "b": b.hash}).fetchall()
                best_bare = min(best_bare, time.perf_counter() - t0)
                t0 = time.perf_counter()
                result = compare(con, "c", [(a.hash, "j")], [(b.hash, "j")], top=10, resamples=2000)
                best_full = min(best_full, time.perf_counter() - t0)
            with Unmaterialised(con):
                t0 = time.perf_counter()
                compare(con, "c", [(a.hash, "j")], [(b.hash, "j")], top=10, resamples=2000)
                best_old = time.perf_counter() - t0
        compared(path, "c", [(a.hash, "j")], [(b.hash, "j")], top=10, resamples=2000)  # computed and stored
        t0 = time.perf_counter()
        stored = compared(path, "c", [(a.hash, "j")], [(b.hash, "j")], top=10, resamples=2000)
        best_stored = time.perf_counter() - t0
        assert stored.summary["texts_paired"] == result.summary["texts_paired"]
        s = result.summary
        print(
            f"texts paired {s['texts_paired']:,}; mean delta {s['mean_delta']:.4f} "
            f"CI [{s['mean_delta_ci'][0]:.4f}, {s['mean_delta_ci'][1]:.4f}]; Pearson {s['pearson']:.4f}, "
            f"Spearman {s['spearman']:.4f}, Kendall {s['kendall_tau_b']:.4f}; {len(result.criteria)} criteria, "
            f"{len(result.movers)} movers"
        )
        print(f"bare pairing query (count, mean delta, Pearson): {best_bare:.2f} s (best of {args.repeat})")
        print(
            f"full A/B (every statistic, 2000 bootstrap resamples per interval, 11 intervals): {best_full:.2f} s "
            f"(best of {args.repeat})"
        )
        print(f"the same, asked the old way (views over the raw judgments): {best_old:.2f} s (once)")
        print(f"the next question, read from the stored comparison (`compare`, the viewer): {best_stored:.3f} s")
        print(
            f"ratio stored / bare: {best_stored / best_bare:.3f} (target <= 0.1); computed / bare: "
            f"{best_full / best_bare:.2f}; old way / bare: {best_old / best_bare:.2f}; computed / old way: "
            f"{best_full / best_old:.2f}"
        )


if __name__ == "__main__":
    main()
