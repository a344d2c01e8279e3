"""A scoring run is one value (tasks/judging/run.Run) and its folder one class (warehouse/run_folder):
a run-wide setting is one field, and only RunFolder knows where plans and landed parts live."""

import json

import pyarrow as pa
import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.library import Library
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.run import Run, RunSummary
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.tasks.judging.shard import run_shard
from rubricflow.tasks.pipeline.score import prepare_run
from rubricflow.warehouse import db
from rubricflow.warehouse.locks import runs_root
from rubricflow.warehouse.run_folder import RunFolder


class NotedOptions(RunOptions):
    """The run-wide settings with one more, added as one field and nothing else."""

    note: str = "left by the test"
    """A note."""


def test_a_run_wide_setting_is_one_field(tmp_path, corpus, thread_judge_server):
    """The new field reaches the tasks with the run and the run's recorded parameters, and the
    run's plan and landed parts are where its folder says."""
    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(3)), str(warehouse), "c")
    bundle = Library().bundle("llm-slop")
    options = NotedOptions(shard_size=2)
    run = Run("r1", "c", str(warehouse), "llm-slop", bundle, JudgeConfig(base_url=server.base_url), options=options)
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


def test_the_flow_takes_a_typed_judge_and_returns_one_summary(tmp_path, corpus, thread_judge_server):
    """`judge` is a JudgeConfig (a dict of its fields is validated into one before the flow runs);
    the flow's summary is the one `rf.Run` is."""
    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(2)), str(warehouse), "c")
    with pytest.raises(Exception, match="temperature"):
        score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url, "temperature": 9})
    assert not runs_root(warehouse).exists() or not list(runs_root(warehouse).glob("r*"))  # refused before a run
    summary = score_corpus("c", "llm-slop", str(warehouse), JudgeConfig(base_url=server.base_url))
    run = RunSummary(warehouse=warehouse, **summary)
    assert run.status == "completed" and run.ok_cells == 2
    assert run.text_scores().height == 2


def test_max_cells_judges_that_many_and_leaves_the_rest_for_the_next_run(tmp_path, corpus, thread_judge_server):
    """max_cells is one field of RunOptions (and its line in plan_cells.sql): the Python API takes
    it as a keyword, the run judges the first cells only, says how many it left, and the next
    run plans exactly those."""
    import rubricflow as rf

    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(5)), str(warehouse), "c")
    judge = rf.Judge(base_url=server.base_url)
    first = rf.Warehouse(warehouse).score("c", "llm-slop", judge, max_cells=2, shard_size=1)
    assert (first.judged_cells, first.deferred_cells, first.skipped_cells) == (2, 3, 0)
    assert first.status == "completed" and server.stats()["requests"] == 2
    with db.reader(warehouse) as con:
        [(message,)] = con.execute("SELECT message FROM runs WHERE run_id = ?", [first.run_id]).fetchall()
    assert message == "3 cells left for the next run (max_cells 2)"
    rest = score_corpus("c", "llm-slop", str(warehouse), judge.config, {"max_cells": 10})
    assert (rest["judged_cells"], rest["deferred_cells"], rest["skipped_cells"]) == (3, 0, 2)
    with pytest.raises(rf.InputError, match="max_cells"):
        rf.Warehouse(warehouse).score("c", "llm-slop", judge, max_cells=0)


def flow_modules() -> list[str]:
    from pathlib import Path

    import rubricflow.flows

    return sorted(p.stem for p in Path(rubricflow.flows.__path__[0]).glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("module", flow_modules())
def test_no_flow_module_opens_the_warehouse_itself(module):
    """A flow body orchestrates: the scoring and nightly flows reach the warehouse through their tasks
    (steps in the run's graph, retried and timed as one), the others through warehouse/store.Store;
    none imports `duckdb`, `warehouse.db` or `warehouse.sqlfiles` (at any depth of the file), so a
    direct open cannot come back unseen (compare --no-score, the cascade, sequential and evolve flows did)."""
    import ast
    from pathlib import Path

    import rubricflow.flows

    tree = ast.parse((Path(rubricflow.flows.__path__[0]) / f"{module}.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {
        f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module for a in n.names
    }
    assert len(flow_modules()) >= 14
    assert not {"duckdb", "rubricflow.warehouse.db", "rubricflow.warehouse.sqlfiles"} & imported


@pytest.mark.parametrize(
    "name", ["score.score_corpus", "compare.compare_flow", "nightly.nightly_scoring", "evolve.evolve_flow"]
)
def test_a_flows_judges_are_typed_in_its_parameter_schema(name):
    """A judge parameter is a JudgeConfig, not a dict or the string a postponed annotation leaves: a
    deployment's run validates its parameters against this schema (a string one failed every night)."""
    import importlib
    import inspect

    from prefect.utilities.callables import parameter_schema

    module, _, attr = name.partition(".")
    flow = getattr(importlib.import_module(f"rubricflow.flows.{module}"), attr)
    judges = [n for n in inspect.signature(flow.fn).parameters if n.startswith("judge") and "hash" not in n]
    judges += ["reflection"] if attr == "evolve_flow" else []
    schema = parameter_schema(flow.fn)
    assert judges and "JudgeConfig" in schema.definitions
    for n in judges:
        assert "#/definitions/JudgeConfig" in json.dumps(schema.properties[n]), (n, schema.properties[n])


def test_evolve_fills_only_the_judge_fields_its_caller_left_unset():
    """The judge makes per_criterion calls unless a strategy is chosen; the reflection model is the
    judge's model at its endpoint unless named."""
    from rubricflow.flows.evolve import unless_set

    judge = unless_set(JudgeConfig(base_url="http://127.0.0.1:9/v1"), strategy="per_criterion")
    assert judge.strategy == "per_criterion" and judge.base_url == "http://127.0.0.1:9/v1"
    assert unless_set(JudgeConfig(strategy="grouped"), strategy="per_criterion").strategy == "grouped"
    reflect = unless_set(JudgeConfig(temperature=0.7), base_url=judge.base_url, model="m")
    assert (reflect.base_url, reflect.model, reflect.temperature) == (judge.base_url, "m", 0.7)
