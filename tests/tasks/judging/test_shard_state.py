"""The process's judge loop (tasks/judging/shard.Worker) outlives every call: what it keeps must be
keyed by everything the kept value depends on, and one call's run must not leak into the next.
Real parts: the offline judge over HTTP on 127.0.0.1, the key read from the environment."""

from __future__ import annotations

import gc
import os
import uuid
import weakref

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.improve.goldens import judge_text
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

BUNDLE = compile_or_raise(resolve("llm-slop"))
TEXT = "We leverage synergies to deliver a robust, seamless, best-in-class experience."


def test_a_changed_api_key_reaches_the_next_call_outside_a_warehouse():
    """A notebook that sets the right key after a 401 must be heard with it: the judge kept for a
    rubric and its settings was built with the first key's client, which the id does not name."""
    with RunningServer(ServerConfig(api_key="the-right-key")) as server:
        config = JudgeConfig(base_url=server.base_url)
        os.environ["OPENAI_API_KEY"] = "a-wrong-key"
        refused = judge_text(BUNDLE, config, "a", TEXT)
        assert refused.errors and all("401" in e or "API key" in e for e in refused.errors), refused.errors
        os.environ["OPENAI_API_KEY"] = "the-right-key"
        judged = judge_text(BUNDLE, config, "a", TEXT)
        assert judged.errors == [], judged.errors


def test_one_calls_refusals_do_not_stop_the_next_call_outside_a_warehouse():
    """The stop rule (a few refusals with nothing answered stop a run sending) belongs to one run:
    outside a warehouse, one call. After the endpoint lets us in, the same settings are heard."""
    with RunningServer(ServerConfig(api_key="granted-later")) as server:
        config = JudgeConfig(base_url=server.base_url)
        os.environ["OPENAI_API_KEY"] = "granted-later"
        server.app.config.api_key = "not-yet"  # the server refuses this key for now
        for _ in range(3):  # one call unit each: as many refusals as the stop rule allows
            assert judge_text(BUNDLE, config, "a", TEXT).errors
        server.app.config.api_key = "granted-later"  # the key is granted
        judged = judge_text(BUNDLE, config, "a", TEXT)
        assert judged.errors == [], judged.errors
        assert server.app.stats.answered >= 1


def test_a_spent_retry_budget_is_one_calls_outside_a_warehouse():
    """Each call outside a warehouse is a run with its own retry budget: retries one call spent
    (here the whole budget: one retry of the one call unit, whose first attempt the server answers
    503) are not missing from the next call."""
    faulty = ServerConfig(fault_rate=1.0, faults=("503",), fault_attempts=1)
    with RunningServer(faulty) as server:
        config = JudgeConfig(base_url=server.base_url, retry_budget=1)
        first = judge_text(BUNDLE, config, "a", TEXT)
        second = judge_text(BUNDLE, config, "b", TEXT + " Again.")
        assert first.errors == [] and second.errors == [], (first.errors, second.errors)


def test_a_finished_runs_judge_is_let_go(tmp_path):
    """A run's Judge (its rendering, limiter, retry budget, `stopping` flag) and the heap it froze
    live for the run: once the flow's judging ends in this process (`end_run`, its `finally`), the
    process keeps none of it, where a notebook or a long-lived process kept every run's for its
    life, with the garbage each run's freeze caught."""
    import dataclasses

    import pyarrow as pa
    import pyarrow.parquet as pq

    from rubricflow.rubrics.render import call_units
    from rubricflow.tasks.judging.judge import Cell
    from rubricflow.tasks.judging.run import Run
    from rubricflow.tasks.judging.shard import Worker, end_run, run_shard

    with RunningServer() as server:
        run = Run.of(
            BUNDLE,
            JudgeConfig(base_url=server.base_url),
            run_id="r-state-let-go",
            corpus_id="c",
            warehouse=str(tmp_path / "w.duckdb"),
            rubric="llm-slop",
        )
        unit = call_units(BUNDLE.rubric, run.judge.strategy, None)[0]
        cell = Cell("k1", "t1", "0" * 64, unit.id, 0, TEXT)
        plan = tmp_path / "s0000.parquet"
        pq.write_table(pa.Table.from_pylist([dataclasses.asdict(cell)]), plan)
        judges = []

        def the_run() -> None:
            judges.append(weakref.ref(Worker.get().judge(run)))  # built: the heap frozen for the run
            assert run_shard(plan, run).ok == 1
            end_run(run.run_id)  # as the flow does when its judging ends, however it ends

        assert _garbage_freed_after(the_run)  # what was frozen for the run is the collector's again
        assert judges[0]() is None


def test_a_changed_azure_api_version_reaches_the_next_call():
    """The provider's query is part of the client too: after Azure's 404 for a version it does not
    serve, a corrected AZURE_OPENAI_API_VERSION must be what the next call sends."""
    os.environ["AZURE_OPENAI_API_KEY"] = "azure-key-for-state"
    with RunningServer(ServerConfig(api_key="azure-key-for-state")) as server:
        url = server.base_url.removesuffix("/v1") + "/openai/deployments/judge-gpt"
        config = JudgeConfig(provider="azure", base_url=url, model="judge-gpt")
        os.environ["AZURE_OPENAI_API_VERSION"] = "latest"  # no version Azure serves
        refused = judge_text(BUNDLE, config, "a", TEXT)
        assert refused.errors and all("404" in e for e in refused.errors), refused.errors
        os.environ["AZURE_OPENAI_API_VERSION"] = "2024-10-21"
        judged = judge_text(BUNDLE, config, "a", TEXT)
        assert judged.errors == [], judged.errors


class _Cycle:
    """Garbage only the cyclic collector frees."""

    def __init__(self) -> None:
        self.me = self


def _garbage_freed_after(action) -> bool:
    """Whether a cycle dropped before `action` is collected after it (the automatic collections
    held off meanwhile, so only what `action` did decides)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        cycle = _Cycle()
        gone = weakref.ref(cycle)
        del cycle
        action()
        gc.collect()
        return gone() is None
    finally:
        if was_enabled:
            gc.enable()


def test_judging_outside_a_warehouse_freezes_no_garbage():
    """A call outside a warehouse (a golden, a candidate rubric of evolve) froze the whole heap,
    garbage included, for the process's life: one freeze per rubric judged."""
    rubric = BUNDLE.rubric.model_copy(update={"goal": f"{BUNDLE.rubric.goal} ({uuid.uuid4().hex})"})
    bundle = compile_or_raise(rubric)  # a rubric this process has not judged: its judge is built now
    with RunningServer() as server:
        config = JudgeConfig(base_url=server.base_url)
        assert _garbage_freed_after(lambda: judge_text(bundle, config, "a", TEXT))


def test_the_judges_kept_outside_a_warehouse_are_the_last_used_few():
    """evolve judges a new candidate rubric at every step (goldens, the proposal gate): the process
    kept a judge for each for its life. It keeps the OUTSIDE_KEPT last used; a rubric judged again
    meanwhile stays. No call is made: building a judge is what is kept."""
    from rubricflow.tasks.judging.run import Run
    from rubricflow.tasks.judging.shard import OUTSIDE_KEPT, Worker

    config = JudgeConfig(base_url="http://127.0.0.1:9/v1")  # never called
    bundles = [
        compile_or_raise(BUNDLE.rubric.model_copy(update={"goal": f"candidate {i} {uuid.uuid4().hex}"}))
        for i in range(OUTSIDE_KEPT + 1)
    ]
    worker = Worker.get()
    first = worker.judge(Run.outside("single", "single", bundles[0], config))
    second = weakref.ref(worker.judge(Run.outside("single", "single", bundles[1], config)))
    for bundle in bundles[2:]:
        assert worker.judge(Run.outside("single", "single", bundles[0], config)) is first  # used again: kept
        worker.judge(Run.outside("single", "single", bundle, config))
    gc.collect()
    assert second() is None  # the least recently used went
    assert worker.judge(Run.outside("single", "single", bundles[0], config)) is first
