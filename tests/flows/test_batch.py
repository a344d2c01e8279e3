"""The Batch API path against the offline judge server's /v1/files and /v1/batches: answers land
like online ones, failed lines and expired batches fall back to online calls, and a crash while
waiting resumes polling the recorded batch instead of submitting it again."""

import os
import signal
import subprocess
import time

import duckdb
import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.standins.batch_api import BatchConfig
from tests.conftest import EXE, ThreadServer, rows, write_corpus

BATCH = {"batch": True, "batch_poll_s": 0.2}


def judged(warehouse):
    return rows(warehouse, "SELECT text_id, criterion_id, value, unit_score, status FROM judgments ORDER BY ALL")


def test_batch_answers_land_like_online_ones_and_failed_lines_go_online(tmp_path, thread_judge_server):
    online, batched = thread_judge_server(), thread_judge_server(batch=BatchConfig(fail_rate=0.3))
    corpus = write_corpus(tmp_path / "c.jsonl", 20)
    for name in ("online", "batch"):
        ingest_flow(str(corpus), str(tmp_path / f"{name}.duckdb"), "c")
    score_corpus("c", "llm-slop", str(tmp_path / "online.duckdb"), {"base_url": online.base_url})
    (tmp_path / "prices.yaml").write_text("rubricflow-offline-judge: {input: 1000, output: 2000}\n")
    run = score_corpus(
        "c",
        "llm-slop",
        str(tmp_path / "batch.duckdb"),
        {"base_url": batched.base_url, "prices": str(tmp_path / "prices.yaml"), **BATCH},
        options={"shard_size": 8},
    )
    warehouse = str(tmp_path / "batch.duckdb")
    stats = batched.stats()
    assert stats["batches_created"] == 3  # 20 cells in shards of 8
    modes = dict(rows(warehouse, "SELECT output_mode, count(*) FROM completions GROUP BY ALL"))
    assert modes["batch:json_schema"] + modes["json_schema"] == 20 and modes["json_schema"] == stats["requests"] > 0
    assert run["judged_cells"] == 20 and run["ok_cells"] == 20
    assert judged(warehouse) == judged(str(tmp_path / "online.duckdb"))  # same answers either way
    assert rows(warehouse, "SELECT count(*), sum(online_cells) FROM batches WHERE status = 'landed (completed)'") == [
        (3, modes["json_schema"])
    ]
    # batch lines cost half of online ones
    ((usd, expected),) = rows(
        warehouse,
        """
        SELECT any_value(r.usd), sum((c.prompt_tokens * 1000 + c.completion_tokens * 2000) / 1e6
                                     * CASE WHEN c.output_mode LIKE 'batch:%' THEN 0.5 ELSE 1 END)
        FROM run_costs r JOIN completions c USING (run_id)""",
    )
    assert usd == pytest.approx(expected) and expected > 0


def test_a_reasoning_models_batch_lines_go_out_in_the_form_it_takes(tmp_path, thread_judge_server):
    """#41: batch lines went out with max_tokens, temperature and logprobs; a reasoning model refuses
    each line with a 400, so every cell was judged online at twice the price. One-token calls learn
    the form first; every line is then answered in the batch."""
    server = thread_judge_server(reasoning_tokens=1500)
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 6)), warehouse, "c")
    run = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, "logprobs": True, **BATCH})
    assert run["ok_cells"] == 6
    assert rows(warehouse, "SELECT output_mode, count(*) FROM completions GROUP BY ALL") == [("batch:json_schema", 6)]
    assert server.stats()["requests"] <= 2 * 3  # the delivery check's two probes, each learning one refusal


def test_an_expired_batch_is_judged_online(tmp_path, thread_judge_server):
    server = thread_judge_server(batch=BatchConfig(expire=True))
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 6)), warehouse, "c")
    run = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, **BATCH})
    assert run["ok_cells"] == 6 and server.stats()["requests"] == 6
    assert rows(warehouse, "SELECT status, online_cells FROM batches") == [("landed (expired)", 6)]


# per provider: its extra score options, the stat counting batches created, each batch's landed status
BATCH_APIS = {
    "openai": ([], "batches_created", "landed (completed)"),
    "anthropic": (["--provider", "anthropic"], "message_batches_created", "landed (ended)"),  # Message Batches
}


@pytest.mark.parametrize("provider", BATCH_APIS)
def test_a_crash_while_waiting_resumes_polling_without_resubmitting(tmp_path, provider):
    """SIGKILL while the run waits on its batch; the next run polls it: never bought twice, every
    cell landed once. Anthropic's requests carry cache_control on the shared block. ~8 s each."""
    options, created, landed = BATCH_APIS[provider]
    server = ThreadServer(batch=BatchConfig(delay_s=6))
    try:
        write_corpus(tmp_path / "c.jsonl", 12)
        env = {**os.environ, "COLUMNS": "200"}
        assert (
            subprocess.run(
                [EXE, "ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb"], cwd=tmp_path, env=env, capture_output=True
            ).returncode
            == 0
        )
        command = [
            EXE,
            "score",
            "-c",
            "c",
            "-r",
            "llm-slop",
            "--base-url",
            server.base_url,
            "--batch",
            "--batch-poll",
            "0.2",
            "-w",
            "w.duckdb",
            *options,
        ]
        first = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.time() + 120
        while server.stats().get(created, 0) < 1 and time.time() < deadline:
            time.sleep(0.2)
        warehouse = str(tmp_path / "w.duckdb")
        # recorded as 'uploaded' with its file, then 'submitted' once the batch is created: a crash while waiting
        while submitted_batches(warehouse) < 1 and time.time() < deadline:
            time.sleep(0.2)
        os.killpg(first.pid, signal.SIGKILL)  # the flow and everything it started, now waiting on the batch
        first.wait()
        assert rows(warehouse, "SELECT status, cells FROM batches") == [("submitted", 12)]
        assert rows(warehouse, "SELECT count(*) FROM completions") == [(0,)]
        online = server.stats()["requests"]  # the first run's form probe, on a Messages endpoint
        again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        stats = server.stats()
        assert stats[created] == 1 and stats["requests"] == online <= 1  # polled, not resubmitted nor judged online
        assert rows(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == [(12, 12)]
        assert rows(warehouse, "SELECT status FROM batches") == [(landed,)]
        if provider == "anthropic":  # each request's shared block (the rubric, a system block) is a cache breakpoint
            assert stats["message_batch_requests_with_cache_control"] == 12
    finally:
        server.stop()


def submitted_batches(warehouse: str) -> int:
    """Batches the warehouse records as submitted; 0 while the running flow holds the file or has not made the table."""
    try:
        return rows(warehouse, "SELECT count(*) FROM batches WHERE status = 'submitted'")[0][0]
    except duckdb.Error:
        return 0


def test_budget_and_batch_are_refused_together():
    from rubricflow.tasks.judging.config import JudgeConfig

    with pytest.raises(ValueError, match="--budget cannot be combined with --batch"):
        JudgeConfig(batch=True, budget_usd=5)


def test_a_batch_bought_but_never_recorded_is_found_not_bought_again(tmp_path, thread_judge_server):
    """A run killed between buying a batch and recording its id used to leave the cells unrecorded,
    and the next run bought them again. The file is recorded first: the next run finds its batch in
    the provider's list and collects it."""
    server = thread_judge_server(batch=BatchConfig(delay_s=1))
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 6)), warehouse, "c")
    first = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, **BATCH, "batch_timeout_s": 0.1})
    assert first["ok_cells"] == 0 and server.stats()["batches_created"] == 1  # bought, still running
    con = duckdb.connect(warehouse)  # back to what a kill right after the purchase leaves: the file's row
    con.execute("UPDATE batch_requests SET batch_id = (SELECT input_file_id FROM batches)")
    con.execute("UPDATE batches SET batch_id = input_file_id, status = 'uploaded'")
    con.execute(  # and a file the provider no longer has: marked lost, no batch bought for it
        "INSERT INTO batches SELECT 'file-gone', 'file-gone', run_id, corpus_id, rubric_hash, judge_hash, 0, "
        "'uploaded', NULL, submitted_at, NULL FROM batches"
    )
    con.close()
    again = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, **BATCH})
    assert again["ok_cells"] == 6 and server.stats()["batches_created"] == 1 and server.stats()["requests"] == 0
    assert rows(warehouse, "SELECT status, batch_id LIKE 'batch_%' FROM batches ORDER BY 1") == [
        ("landed (completed)", True),
        ("lost", False),
    ]


def test_a_file_the_provider_no_longer_has_buys_no_batch():
    import asyncio

    from openai import AsyncOpenAI

    from rubricflow.tasks.judging.batch_openai import find_or_create
    from rubricflow.tasks.standins.judge_server import RunningServer

    async def resolve(base_url: str) -> str | None:
        async with AsyncOpenAI(base_url=base_url, api_key="unused") as client:
            return await find_or_create(client, "file-that-was-never-uploaded")

    with RunningServer() as server:
        assert asyncio.run(resolve(server.base_url)) is None
        assert server.app.batches.created == 0  # no batch bought for a file that is gone
