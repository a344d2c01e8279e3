"""rf.Judge's engine lives as long as the rf.Judge object, not as long as the process."""

from __future__ import annotations

import gc
import weakref

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.standins.judge_server import RunningServer

BUNDLE = compile_or_raise(resolve("llm-slop"))


def test_an_rf_judge_gone_takes_its_engine_with_it():
    """rf.Judge's engine (prompts, limiter, retry budget, stop rule) lives as long as the rf.Judge:
    the process does not keep it after, and a later rf.Judge at the same address starts afresh."""
    import rubricflow as rf

    with RunningServer() as server:
        judge = rf.Judge(base_url=server.base_url)
        engine = weakref.ref(judge._engine(BUNDLE))
        assert judge._engine(BUNDLE) is engine()  # one per rubric for the object's life
        del judge
        gc.collect()
        assert engine() is None
