"""A scoring run is one value (tasks/judging/run.Run) and its folder one class (warehouse/run_folder):
a run-wide setting is one field, and only RunFolder knows where plans and landed parts live."""

import json
from dataclasses import dataclass

import pyarrow as pa
import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.library import Library
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.run import Run, RunSummary
from rubricflow.tasks.judging.shard import run_shard
from rubricflow.tasks.pipeline.score import prepare_run
from rubricflow.warehouse import db
from rubricflow.warehouse.locks import runs_root
from rubricflow.warehouse.run_folder import RunFolder


@dataclass(frozen=True)
class NotedRun(Run):
    """A run with one more run-wide setting, added as one field and nothing else."""

    note: str = "left by the test"


def test_a_run_wide_setting_is_one_field(tmp_path, corpus, judge_server):
    """The new field reaches the tasks with the run and the run's recorded parameters, and the
    run's plan and landed parts are where its folder says."""
    server = judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(3)), str(warehouse), "c")
    bundle = Library().bundle("llm-slop")
    run = NotedRun("r1", "c", str(warehouse), "llm-slop", bundle, JudgeConfig(base_url=server.base_url), shard_size=2)
    plan, recovered, estimate = prepare_run.fn(run)  # the task body, outside a flow
    assert [p.parent for p in plan.files] == [run.folder.plan, run.folder.plan] and recovered == 0
    with db.reader(warehouse) as con:
        [(parameters,)] = con.execute("SELECT parameters FROM runs WHERE run_id = 'r1'").fetchall()
    recorded = json.loads(parameters)
    assert recorded["note"] == "left by the test" and recorded["shard_size"] == 2
    assert recorded["base_url"] == server.base_url  # the judge's settings beside the run's
    result = run_shard(plan.files[0], run)
    assert result.cells == 2 and [str(p) for p in run.folder.landed()] == result.completions_files


def test_the_run_folder_lands_parts_by_rename_and_prunes_what_is_empty(tmp_path):
    runs = tmp_path / "runs"
    live, dead = RunFolder(runs, "live"), RunFolder(runs, "dead")
    table = pa.table({"x": [1]})
    first = dead.land(table, table, "shard-00000.p0000")
    assert first.name == "shard-00000.p0000.completions.parquet"
    assert RunFolder.judgments_of(first) == dead.landing / "shard-00000.p0000.judgments.parquet"
    assert not list(dead.landing.glob("*.tmp"))  # nothing half-written stays
    live.land(table, table, "shard-00000.p0000")
    (runs / "locks").mkdir()
    assert [f.run_id for f in RunFolder.all(runs)] == ["dead", "live"]  # the locks folder is no run's
    assert RunFolder.unloaded(runs, live={"live"}) == [first]
    RunFolder.prune(runs, live={"live"})
    assert dead.path.is_dir()  # an unloaded part keeps its folder
    RunFolder.forget(first)
    dead.plan.mkdir()
    RunFolder.prune(runs, live={"live"})
    assert not dead.path.exists() and live.landed() and (runs / "locks").is_dir()


def test_the_flow_takes_a_typed_judge_and_returns_one_summary(tmp_path, corpus, judge_server):
    """`judge` is a JudgeConfig (a dict of its fields is validated into one before the flow runs);
    the flow's summary is the one `rf.Run` is."""
    server = judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(2)), str(warehouse), "c")
    with pytest.raises(Exception, match="temperature"):
        score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url, "temperature": 9})
    assert not runs_root(warehouse).exists() or not list(runs_root(warehouse).glob("r*"))  # refused before a run
    summary = score_corpus("c", "llm-slop", str(warehouse), JudgeConfig(base_url=server.base_url))
    run = RunSummary(warehouse=warehouse, **summary)
    assert run.status == "completed" and run.ok_cells == 2
    assert run.text_scores().height == 2
