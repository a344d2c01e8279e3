"""The labelling page's save (`rubricflow view`, /label): the time of one answer stored as a label
and the next page's read, in two ways measured in the same run on the same warehouse (bench/viewer.py's
synthetic one, --texts texts judged on 10 criteria):

- one writer a save (before): a writing connection opened for each answer (the schema applied, the
  file attached), closed after it (a checkpoint), then a reading connection opened again for the page;
- the kept writer (now): the viewer's store opens one writer at the first answer and keeps it for
  the answers and pages that follow, closing it when idle or when another process waits.

Target: the kept writer <= 0.5x one writer a save.

    python bench/labelling.py [--texts 20000] [--answers 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from viewer import CRITERIA, build

from rubricflow.tasks.presentation.labelling import _store_label
from rubricflow.tasks.presentation.viewer import Warehouse
from rubricflow.warehouse import db

READ = "SELECT count(*) FROM labels WHERE corpus_id = 'big' AND rater = 'bench-rater'"


def one_writer_a_save(path: Path, texts: list[str]) -> list[float]:
    times = []
    for k, text_id in enumerate(texts):
        started = time.perf_counter()
        with db.writer(path) as con:
            _store_label(con, "big", text_id, CRITERIA[k % len(CRITERIA)], "bench-rater", 1.0)
        with db.reader(path) as con:
            con.execute(READ).fetchall()
        times.append(time.perf_counter() - started)
    return times


def kept_writer(path: Path, texts: list[str]) -> list[float]:
    store = Warehouse(path)
    times = []
    try:
        for k, text_id in enumerate(texts):
            started = time.perf_counter()
            store.write(_store_label, "big", text_id, CRITERIA[k % len(CRITERIA)], "bench-rater", 2.0)
            store.run(lambda con: con.execute(READ).fetchall())
            times.append(time.perf_counter() - started)
    finally:
        store.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=20_000)
    parser.add_argument("--answers", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.duckdb"
        build(path, args.texts)
        texts = [f"t{i:07d}" for i in range(args.answers)]
        before = statistics.median(one_writer_a_save(path, texts))
        now = statistics.median(kept_writer(path, texts))
        with db.reader(path) as con:
            (stored,) = con.execute(READ).fetchone()
    print(f"{args.texts} texts, {args.answers} answers each way; median seconds per answer (save + next read):")
    print(f"  one writer a save   {before:.4f}")
    print(f"  kept writer         {now:.4f}")
    print(f"labels stored: {stored} (one per text and criterion: a changed answer replaces)")
    print(f"ratio kept writer / one writer a save: {now / before:.3f}x (target <= 0.5x)")


if __name__ == "__main__":
    main()
