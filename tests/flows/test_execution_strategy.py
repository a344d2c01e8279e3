"""Seed 001's execution strategy is enforced: a rubric's `surface.execution_strategy` decides how many
criteria one call asks about when the user gives no strategy; a strategy given wins; the run records
which strategy it used and where it came from (`runs.strategy`, `runs.parameters.strategy_from`)."""

import json

import rubricflow as rf
from rubricflow.rubrics.formats import dump_yaml
from rubricflow.rubrics.library import Library
from tests.conftest import rows

PLAIN = "The council met on Tuesday and approved the road budget by seven votes to two."


def test_the_rubrics_strategy_applies_unless_one_is_given_and_the_run_records_which(tmp_path, thread_judge_server):
    server = thread_judge_server()
    slop = Library().bundle("llm-slop").rubric  # 3 criteria, no strategy of its own
    declared = slop.model_copy(
        update={"surface": slop.surface.model_copy(update={"execution_strategy": "per_criterion"})}
    )
    (tmp_path / "declared.yaml").write_text(dump_yaml(declared))
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest([{"id": f"t{i}", "text": PLAIN} for i in range(2)], corpus="c")

    own = wh.score("c", str(tmp_path / "declared.yaml"), rf.Judge(base_url=server.base_url))  # the CLI's path
    given = wh.score("c", str(tmp_path / "declared.yaml"), rf.Judge(base_url=server.base_url, strategy="holistic"))
    assert (own.planned_cells, given.planned_cells) == (6, 2)  # 2 texts x the strategy's call units
    recorded = {
        run_id: (strategy, json.loads(parameters)["strategy_from"])
        for run_id, strategy, parameters in rows(
            str(tmp_path / "w.duckdb"), "SELECT run_id, strategy, parameters FROM runs"
        )
    }
    assert recorded[own.run_id] == ("per_criterion", "rubric")
    assert recorded[given.run_id] == ("holistic", "option")
    assert rf.Judge(base_url=server.base_url).config.strategy_source(slop) == "default"  # holistic, as before
