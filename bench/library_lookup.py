"""Library lookup latency over a 1,000-rubric library (target: p99 < 10 ms).

Baseline in the same run: reading and parsing the rubric's file on every lookup, which is what a
caller without the library's index would do.

    python bench/library_lookup.py [--rubrics 1000] [--lookups 20000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from rubricflow.rubrics.formats import dump_yaml, load_rubric
from rubricflow.rubrics.library import BUILTIN, Library


def percentile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=1000)[int(q * 1000) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rubrics", type=int, default=1000)
    parser.add_argument("--lookups", type=int, default=20000)
    args = parser.parse_args()
    seeds = [load_rubric(p) for p in sorted(BUILTIN.glob("*.yaml"))]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = []
        for i in range(args.rubrics):
            base = seeds[i % len(seeds)]
            meta = base.metadata.model_copy(
                update={"id": f"{base.metadata.id}-{i}", "tags": base.metadata.tags + (f"t{i % 50}",)}
            )
            path = root / f"r{i}.yaml"
            path.write_text(dump_yaml(base.model_copy(update={"metadata": meta})), encoding="utf-8")
            paths.append(path)
        t0 = time.perf_counter()
        lib = Library([root])
        build_s = time.perf_counter() - t0
        rng = random.Random(7)
        kinds = {
            "name": lambda i: lib.get(f"{seeds[i % len(seeds)].metadata.id}-{i}"),
            "name@version": lambda i: lib.get(f"{seeds[i % len(seeds)].metadata.id}-{i}@1.0.0"),
            "path": lambda i: lib.get(str(paths[i])),
            "tag search": lambda i: lib.find(tags=(f"t{i % 50}",)),
        }
        print(f"library of {len(lib)} rubrics indexed in {build_s:.2f} s")
        print(f"{'lookup':<14}{'p50 ms':>10}{'p99 ms':>10}")
        for name, fn in kinds.items():
            samples = []
            for _ in range(args.lookups if name != "tag search" else 2000):
                i = rng.randrange(args.rubrics)
                t = time.perf_counter()
                fn(i)
                samples.append((time.perf_counter() - t) * 1000)
            print(f"{name:<14}{statistics.median(samples):>10.4f}{percentile(samples, 0.99):>10.4f}")
        baseline = []
        for _ in range(500):
            i = rng.randrange(args.rubrics)
            t = time.perf_counter()
            load_rubric(paths[i])
            baseline.append((time.perf_counter() - t) * 1000)
        print(
            f"{'baseline: parse file each time':<14}  p50 {statistics.median(baseline):.3f} ms  p99 {percentile(baseline, 0.99):.3f} ms"
        )


if __name__ == "__main__":
    main()
