"""Labels and evolution from Python, as the CLI's `rubricflow labels import` and `rubricflow improve
evolve` do them (`rf.Warehouse.import_labels`, `rf.Warehouse.evolve`): the same loaders and the same
Prefect flow, so a notebook and a terminal record the same rows."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubricflow.api_frames import table_of
from rubricflow.errors import InputError
from rubricflow.flows.deploy_params import refuse_unset

if TYPE_CHECKING:
    from rubricflow.api_judge import Judge
    from rubricflow.api_rubric import RubricLike


def import_labels(warehouse: Path, data: Any, corpus: str, rater: str | None = None) -> int:
    """Store human (or another judge's) labels: a label file (CSV, JSONL, Parquet; long or wide, as
    `rubricflow labels import` reads it) or data in memory in those layouts (a DataFrame, an Arrow
    table, a list of dicts). `rater`: as `--rater` (None: the file's rater column, else "human").
    Returns how many labels were stored; what was not read is said on stderr, as the CLI says it."""
    import sys

    from rubricflow.tasks.loaders.labels import import_labels as load

    refuse_unset(corpus=corpus)
    if isinstance(data, str | Path):
        source = Path(data)
    else:
        import pyarrow.parquet as pq

        source = warehouse.parent / "corpora" / corpus / f"labels-{rater or 'human'}.parquet"  # what the loader reads
        source.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table_of(data), source)
    stored, *_, warnings = load(source, corpus, warehouse, rater)
    for line in warnings:
        print(line, file=sys.stderr)
    return stored


def evolve(
    warehouse: Path,
    corpus: str,
    rubric: RubricLike,
    judge: Judge,
    labels: str = "human:overall",
    reflection: Judge | None = None,
    max_rounds: int = 3,
    output_dir: str | Path | None = None,
    **options: Any,
) -> dict:
    """`rubricflow improve evolve`: `options` are its other settings by their Python names: max_calls,
    seed, validation, test, shard_size, objectives ({name: weight}), select, tolerances ({name: fall}),
    minibatch, invariants, gate, co_evolve. Returns the flow's report (rounds, start, best, objectives)."""
    from rubricflow.api_rubric import flow_reference, load_rubric
    from rubricflow.cli.flow_start import start_flows
    from rubricflow.cli.improve_evolve import parse_target
    from rubricflow.tasks.improve.objectives import Objectives

    refuse_unset(corpus=corpus)
    unknown = sorted(set(options) - set(_EVOLVE_OPTIONS))
    if unknown:
        raise InputError(f"evolve: unknown option {', '.join(unknown)}; choose from {', '.join(_EVOLVE_OPTIONS)}")
    opts = {**_EVOLVE_OPTIONS, **options}
    raters, criterion = parse_target(labels)
    settings = {"weights": opts["objectives"] or {"agreement": 1.0}, "select": opts["select"]}
    settings["tolerances"] = opts["tolerances"] or {}
    Objectives(**settings)  # checked before any flow starts
    ref = flow_reference(rubric, warehouse.parent / "rubrics")
    folder = Path(output_dir or warehouse.parent / f"evolve-{load_rubric(rubric).id}")
    start_flows()
    from rubricflow.flows.evolve import evolve_flow

    chosen = {k: opts[k] for k in ("minibatch", "invariants", "gate", "co_evolve")}
    return evolve_flow(
        corpus, ref, str(warehouse), raters, criterion, judge.config, reflection.config if reflection else None,
        max_rounds, opts["max_calls"], opts["seed"], opts["validation"], opts["test"], str(folder),
        opts["shard_size"], settings=settings, options=chosen,
    )  # fmt: skip


_EVOLVE_OPTIONS: dict[str, Any] = {  # the CLI's defaults
    "max_calls": None,
    "seed": 0,
    "validation": 0.2,
    "test": 0.2,
    "shard_size": 2000,
    "objectives": None,
    "select": "weighted",
    "tolerances": None,
    "minibatch": 12,
    "invariants": False,
    "gate": False,
    "co_evolve": False,
}
