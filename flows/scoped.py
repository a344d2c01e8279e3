"""A scoring run's scoped criteria (warehouse/scopes.py): the units cut from the corpus's
transcripts, each criterion's units scored by a run of its unit rubric (a subflow: one judge call per
unit), and the unit scores reduced onto the run's transcripts before the run plans its own cells."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from prefect import get_run_logger

from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.run import Run
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.tasks.pipeline.ingest import corpus_dir
from rubricflow.warehouse import scopes


def score_scoped(run: Run, judge: JudgeConfig, options: RunOptions, workers: int, score_corpus: Callable) -> dict:
    """Judge the rubric's scoped criteria unit by unit (each criterion's units a `score_corpus`
    subflow run, passed in: flows/score imports this module) and land their reduced scores on `run`;
    the number of units judged or already landed, and of long transcripts segmented or cut."""
    path, rubric = Path(run.warehouse), run.bundle.rubric
    units_id = scopes.unit_corpus_id(run.corpus_id)
    folder = corpus_dir(path, units_id)
    units = scopes.cut_and_load_units(path, run.corpus_id, rubric, folder)
    unit_rubrics, unit_judge = {}, ""
    for criterion in (c for c in rubric.criteria if c.scoped):
        texts = [u.unit_id for u in units if u.criterion_id == criterion.id]
        if not texts:
            continue
        rubric_file = folder / f"{criterion.id}.rubric.yaml"  # JSON is YAML: loaded as any rubric file
        rubric_file.write_text(json.dumps(scopes.unit_rubric(rubric, criterion.id).model_dump(mode="json")))
        summary = score_corpus(units_id, str(rubric_file), run.warehouse, judge, options, workers=workers, texts=texts)
        unit_rubrics[criterion.id], unit_judge = summary["rubric_hash"], summary["judge_hash"]
    hashes = {"rubric": run.bundle.hash, "judge": run.judge_hash, "unit_judge": unit_judge}
    scopes.land_reduced_in(path, run.corpus_id, rubric, hashes, unit_rubrics, run.run_id)
    logger = get_run_logger()
    logger.info("run %s: %s units of scoped criteria judged", run.run_id, len(units))
    long = scopes.long_transcripts(units)
    if long["segmented"] or long["cut"]:
        logger.warning(
            "run %s: %s transcript(s) longer than the judge's context judged in %s segments, %s cut to %s",
            run.run_id, long["segmented"], long["segments"], long["cut"], rubric.long_transcripts.mode,  # type: ignore[union-attr]
        )  # fmt: skip
    return {"units": len(units), **long}
