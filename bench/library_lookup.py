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

from rubricflow.rubrics import metrics as rubric_metrics
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
            "name@version": lambda i: lib.get(
                f"{seeds[i % len(seeds)].metadata.id}-{i}@{seeds[i % len(seeds)].metadata.version}"
            ),
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
        with_metrics(lib, kinds["name"], args.lookups, rng)
        baseline = []
        for _ in range(500):
            i = rng.randrange(args.rubrics)
            t = time.perf_counter()
            load_rubric(paths[i])
            baseline.append((time.perf_counter() - t) * 1000)
        print(
            f"{'baseline: parse file each time':<14}  p50 {statistics.median(baseline):.3f} ms  p99 {percentile(baseline, 0.99):.3f} ms"
        )


def timed(fn, lookups: int, rng: random.Random, size: int) -> list[float]:
    samples = []
    for _ in range(lookups):
        i = rng.randrange(size)
        t = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - t) * 1000)
    return samples


def with_metrics(lib: Library, lookup, lookups: int, rng: random.Random) -> None:
    """Name lookups with Forge's telemetry off and on (an in-memory reader), in the same run."""
    try:
        from opentelemetry import metrics as otel
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    except ImportError:
        print("telemetry on: skipped (the otel extra is not installed)")
        return
    off = timed(lookup, lookups, rng, len(lib))
    reader = InMemoryMetricReader()
    otel.set_meter_provider(MeterProvider(metric_readers=[reader]))
    rubric_metrics.reset()
    on = timed(lookup, lookups, rng, len(lib))
    counted = sum(
        p.value
        for r in reader.get_metrics_data().resource_metrics
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == "rubric.usage_count"
        for p in m.data.data_points
    )
    print(
        f"telemetry on: p99 {percentile(on, 0.99):.4f} ms vs off {percentile(off, 0.99):.4f} ms, "
        f"ratio on / off {percentile(on, 0.99) / percentile(off, 0.99):.2f}x; usage_count total {counted}"
    )


if __name__ == "__main__":
    main()
