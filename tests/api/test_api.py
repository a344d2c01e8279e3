"""The Python API (`import rubricflow as rf`) on the offline judge over real HTTP, through the real
Prefect flows and a real DuckDB file: the names of the contract, their results, and bad input."""

import asyncio
import os
import signal
import subprocess
import sys
import time

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import rubricflow as rf
from rubricflow.rubrics.formats import dump_yaml
from tests.conftest import ROOT, rows

pytestmark = pytest.mark.slow

SLOP = "Certainly! Nestled in the heart of town, this vibrant place plays a vital role. Moreover, I hope this helps."
PLAIN = "The council met on Tuesday and approved the road budget by seven votes to two."


@pytest.fixture
def judge(thread_judge_server):
    return rf.Judge(base_url=thread_judge_server().base_url, strategy="per_criterion")


def test_evaluate_one_text_with_callbacks_sync_async_and_inside_a_running_loop(judge):
    rubric = rf.load_rubric("llm-slop")
    started, done = [], []
    r = judge.evaluate(rubric, SLOP, on_criterion_start=started.append, on_criterion_done=done.append)
    assert sorted(started) == sorted(rubric.criteria) and sorted(c.name for c in done) == sorted(rubric.criteria)
    assert set(r.criteria) == set(rubric.criteria)
    assert r.score is not None and 0 <= r.score <= 1 and r.label and r.passed is False and r.disqualified is False
    assert r.criteria["puffery"].rationale and r.criteria["puffery"].status == "scored"
    assert r.usage.calls == 3 and r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    assert "llm-slop@1.0.0" in repr(r) and "<table>" in r._repr_html_()
    plain = judge.evaluate("llm-slop", PLAIN)
    assert plain.score > r.score  # the offline judge sees the slop

    async def in_a_notebook():  # a sync call inside a running event loop, as in Jupyter
        inside = judge.evaluate(rubric, SLOP)
        awaited = await judge.aevaluate(rubric, SLOP)
        return inside, awaited

    inside, awaited = asyncio.run(in_a_notebook())
    assert inside.score == awaited.score == r.score


def test_evaluate_many_keeps_order_and_matches_evaluate(judge):
    texts = [PLAIN, SLOP, {"id": "x", "text": PLAIN + " It rained."}]
    results = judge.evaluate_many("llm-slop", texts)
    assert [r.text_id for r in results] == ["0", "1", "x"]
    assert [r.score for r in results] == [judge.evaluate("llm-slop", t).score for t in (PLAIN, SLOP, texts[2]["text"])]
    frame = results.to_polars()
    assert frame.columns[:5] == ["text_id", "score", "label", "passed", "disqualified"] and frame.height == 3
    assert results.usage.calls == 9


def test_bad_input_names_the_text_column_row_or_rubric_and_writes_nothing(judge, tmp_path):
    with pytest.raises(rf.InputError, match="text '3': the text is a int"):
        judge.evaluate_many("llm-slop", [PLAIN, PLAIN, PLAIN, 42])
    with pytest.raises(rf.InputError, match="no rubric named 'no-such-rubric'"):
        judge.evaluate("no-such-rubric", PLAIN)
    with pytest.raises(rf.InputError, match="bogus_option: Extra inputs are not permitted"):
        rf.Judge(model=None, bogus_option=1)
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    frame = pl.DataFrame({"ID": ["a", "b"], "Reply": [PLAIN, SLOP]})
    with pytest.raises(rf.InputError, match=r"no column 'Answer' \(the text column\); columns are \['ID', 'Reply'\]"):
        wh.ingest(frame, corpus="c", text="Answer", id="ID")
    with pytest.raises(rf.InputError, match="no column 'Question' \\(the input column\\)"):
        wh.ingest(frame, corpus="c", text="Reply", input="Question")
    with pytest.raises(rf.InputError, match=r"row 2 \(id 'b'\): column 'Reply' is missing"):
        wh.ingest(pd.DataFrame({"ID": ["a", "b"], "Reply": [PLAIN, None]}), corpus="c", text="Reply", id="ID")
    with pytest.raises(rf.InputError, match=r"row 2 \(id 'b'\): column 'text' holds a int"):
        wh.ingest([{"id": "a", "text": PLAIN}, {"id": "b", "text": 7}], corpus="c")
    with pytest.raises(rf.InputError, match="split= applies to a Hugging Face dataset folder, not to data in memory"):
        wh.ingest(frame, corpus="c", text="Reply", split="test")
    (tmp_path / "plain.jsonl").write_text('{"text": "x"}\n')
    with pytest.raises(rf.InputError, match="plain.jsonl: --split applies to a Hugging Face dataset folder"):
        wh.ingest(tmp_path / "plain.jsonl", corpus="c", split="test")  # refused before any flow starts
    assert not (tmp_path / "w.duckdb").exists() and not (tmp_path / "corpora").exists()


def test_a_notebook_session_ingests_scores_reads_compares_through_the_flows(judge, tmp_path):
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    frame = pd.DataFrame(
        {"ID": ["a", "b", "c"], "Reply": [SLOP, PLAIN, PLAIN + " Moreover, it rained."], "Asked": ["q1", "q2", "q3"]}
    )
    loaded = wh.ingest(frame, corpus="replies", text="Reply", id="ID", input="Asked")
    assert (loaded.corpus_id, loaded.rows_ok, loaded.rows_quarantined) == ("replies", 3, 0)
    assert rows(tmp_path / "w.duckdb", "SELECT text_id, input FROM texts ORDER BY 1") == [
        ("a", "q1"),
        ("b", "q2"),
        ("c", "q3"),
    ]
    v1 = rf.load_rubric("llm-slop")
    run = wh.score("replies", v1, judge)
    assert isinstance(run, rf.Run) and run.status == "completed" and run.ok_cells == 9
    scores = run.text_scores()
    assert isinstance(scores, pl.DataFrame) and scores["text_id"].to_list() == ["a", "b", "c"]
    # the flow's verdicts equal the in-process ones, text by text
    local = judge.evaluate_many(v1, [{"id": i, "text": t} for i, t in zip(frame["ID"], frame["Reply"], strict=True)])
    assert scores["score"].to_list() == pytest.approx([r.score for r in local])
    # a second version from YAML text, then an A/B of the two
    v2 = rf.load_rubric(dump_yaml(v1.rubric).replace("  id: llm-slop\n", "  id: llm-slop\n  version: 1.1.0\n"))
    ab = wh.compare("replies", v1, v2, judge=judge)
    assert ab.summary["texts_paired"] == 3 and ab.rubric_b == "llm-slop@1.1.0"
    assert wh.runs().height == 3 and wh.text_scores(corpus="replies", rubric="llm-slop@1.1.0").height == 3
    assert wh.query("SELECT count(*) AS n FROM texts")["n"].to_list() == [3]
    # no connection is held between calls: another process may write the file now
    duckdb.connect(str(tmp_path / "w.duckdb")).close()


def test_a_rubric_requiring_input_refuses_a_corpus_without_it_naming_the_texts(judge, tmp_path):
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest(pa.table({"id": ["a", "b"], "text": [PLAIN, SLOP], "input": ["Plan the roads?", None]}), corpus="c")
    with pytest.raises(rf.InputError, match=r"requires each text's input.*texts without one: 'b'"):
        wh.score("c", "helpfulness", judge)
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM completions") == [(0,)]


def test_the_cli_maps_columns_through_the_same_ingest(tmp_path):
    source = tmp_path / "replies.csv"
    source.write_text('ID,Reply,Customer message,Kind\nr1,"Hello there.",Where is it?,email\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "rubricflow.launch", "ingest", str(source), "-c", "replies", "--text-field", "Reply"]
        + ["--id-field", "ID", "--input-field", "Customer message", "--genre-field", "Kind"]
        + ["--warehouse", str(tmp_path / "w.duckdb")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert rows(tmp_path / "w.duckdb", "SELECT text_id, input, genre, metadata FROM texts") == [
        ("r1", "Where is it?", "email", '{"ID": "r1"}')
    ]  # the mapped columns are not kept again in the metadata


INTERRUPTED = """
import sys, rubricflow as rf
wh = rf.Warehouse("w.duckdb")
wh.ingest([{"id": f"t{i}", "text": f"The council met on day {i}."} for i in range(200)], corpus="c")
print("INGESTED", flush=True)
wh.score("c", "llm-slop", rf.Judge(base_url=sys.argv[1], max_in_flight=2), shard_size=5)
"""


def test_an_interrupt_closes_the_run_interrupted_and_keeps_what_landed(thread_judge_server, tmp_path):
    server = thread_judge_server(latency_ms=500)
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, server.base_url], cwd=tmp_path, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "INGESTED"
    deadline = time.monotonic() + 120
    while server.stats().get("requests", 0) < 6 and time.monotonic() < deadline:  # judging is under way
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    [(status, message)] = rows(tmp_path / "w.duckdb", "SELECT status, message FROM runs")
    assert status == "interrupted" and "next run judges the rest" in message
    sent = server.stats()["answered"]
    run = rf.Warehouse(tmp_path / "w.duckdb").score("c", "llm-slop", rf.Judge(base_url=server.base_url))
    assert run.recovered_cells + run.skipped_cells > 0  # the interrupted run's answers were kept
    assert rows(tmp_path / "w.duckdb", "SELECT count(*), count(DISTINCT cell_key) FROM completions") == [(200, 200)]
    probes = 4  # each run's two system-prompt delivery checks
    assert server.stats()["answered"] - sent <= 200 - (sent - probes) + probes  # nothing bought twice


SCRIPT = """
import rubricflow as rf, polars as pl
wh = rf.Warehouse("w.duckdb")
wh.ingest(pl.DataFrame({"text": [%r, %r]}), corpus="c")
run = wh.score("c", "llm-slop", rf.Judge(base_url=%r))
print("RUN", run.status, run.ok_cells)
"""


def test_a_python_process_uses_the_shared_prefect_server_and_prints_no_error(thread_judge_server, tmp_path):
    server = thread_judge_server()
    env = {k: v for k, v in os.environ.items() if k not in ("DO_NOT_TRACK", "PREFECT_SERVER_ANALYTICS_ENABLED")}
    env.pop("PREFECT_API_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT % (PLAIN, SLOP, server.base_url)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "RUN completed 2" in done.stdout, done.stderr[-3000:]
    assert "ERROR" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
    from rubricflow.tasks.runtime import prefect_server

    assert prefect_server.current() is not None  # the shared server the CLI uses, left running for the next


def test_import_rubricflow_imports_no_engine():
    code = "import sys, rubricflow; print(sorted(m for m in sys.modules if m.split('.')[0] in ('prefect', 'duckdb', 'polars', 'openai')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
