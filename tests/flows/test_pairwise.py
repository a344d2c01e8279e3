"""Pairwise judging on the HHH alignment preference pairs (221 human choices): every pair in both
orders through the scoring pipeline, the verdict views, and each figure recomputed here from the
raw judgments and texts."""

import json
import os
import subprocess

import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.formats import dump
from rubricflow.rubrics.library import Library
from rubricflow.rubrics.pairwise import pairwise_rubric
from tests.conftest import EXE, SHARED, kill_once_answered, rows

HHH = SHARED / "calibration/hhh_alignment/hhh_alignment_eval.json"


@pytest.fixture(scope="module")
def hhh(tmp_path_factory):
    from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

    tmp = tmp_path_factory.mktemp("hhh")
    warehouse = str(tmp / "w.duckdb")
    report = ingest_flow(str(HHH), warehouse, "hhh")
    rubric = tmp / "helpfulness-pairwise.yaml"
    rubric.write_text(dump(pairwise_rubric(Library().bundle("helpfulness").rubric), "yaml"))
    with RunningServer(ServerConfig()) as server:
        run = score_corpus("hhh", str(rubric), warehouse, {"base_url": server.base_url})
    return {"warehouse": warehouse, "report": report, "run": run}


def test_each_pair_becomes_two_texts_with_a_seeded_side_for_the_human_choice(hhh):
    assert hhh["report"]["rows_ok"] == 442 and hhh["report"]["rows_quarantined"] == 0
    labels = rows(
        hhh["warehouse"],
        "SELECT json_extract_string(metadata, '$.label') AS l, count(*) FROM texts "
        "WHERE text_id LIKE '%:ab' GROUP BY l ORDER BY l",
    )
    (_, a), (_, b) = labels
    assert a + b == 221 and 80 < a < 141  # the chosen response is `a` about half the time


def independent_pair_figures(warehouse) -> dict:
    """criterion -> (pairs, consistency, position bias, accuracy), counted in Python from the raw
    judgments and texts (not from the views)."""
    raw = rows(
        warehouse,
        """SELECT t.text_id, j.criterion_id, j.judge_hash, json_extract_string(j.value, '$'), t.metadata
                             FROM judgments j JOIN texts t USING (corpus_id, text_id) WHERE j.status = 'scored'""",
    )
    slots: dict = {}
    for text_id, criterion, judge, slot, metadata in raw:
        pair, order = text_id.rsplit(":", 1)
        slots.setdefault((pair, criterion, judge), {"label": json.loads(metadata)["label"]})[order] = slot
    swap = {"a": "b", "b": "a", "tie": "tie"}
    by_criterion: dict = {}
    for (_pair, criterion, _), s in slots.items():
        if "ab" not in s or "ba" not in s:
            continue
        ab, ba = s["ab"], swap[s["ba"]]
        final = ab if ab == ba else "tie"
        by_criterion.setdefault(criterion, []).append((ab == ba, s["ab"] == s["ba"] != "tie", final == s["label"]))
    return {
        c: (len(m), sum(x[0] for x in m) / len(m), sum(x[1] for x in m) / len(m), sum(x[2] for x in m) / len(m))
        for c, m in by_criterion.items()
    }


def assert_summary_matches(warehouse) -> list[tuple]:
    summary = rows(
        warehouse,
        "SELECT criterion_id, pairs, consistency, position_bias, accuracy FROM pairwise_summary ORDER BY criterion_id",
    )
    mine = independent_pair_figures(warehouse)
    assert {c for c, *_ in summary} == set(mine)
    for criterion, pairs, consistency, bias, accuracy in summary:
        assert (pairs, consistency, bias, accuracy) == pytest.approx(mine[criterion])
    return summary


def test_pair_verdicts_and_summary_match_an_independent_count(hhh):
    summary = assert_summary_matches(hhh["warehouse"])
    assert all(pairs == 221 for _, pairs, *_ in summary)
    # the offline judge takes the first response on near-ties, so swapping the order exposes it
    assert all(0 < bias < 1 for _, _, _, bias, _ in summary)
    print(
        "\noffline judge on HHH (helpfulness, pairwise):",
        [(c, f"consistent {k:.3f}", f"position bias {b:.3f}", f"accuracy {a:.3f}") for c, _, k, b, a in summary],
    )


def test_bad_pairs_are_quarantined_and_systems_get_win_rates(tmp_path, thread_judge_server):
    pairs = [
        {
            "pair_id": f"p{i}",
            "prompt": "Say hello.",
            "response_a": f"Hello there, friend number {i}.",
            "response_b": "Moreover, I hope this helps! Certainly!",
            "system_a": "alpha",
            "system_b": "beta",
            "label": "a",
        }
        for i in range(6)
    ]
    pairs += [
        {"pair_id": "no-b", "prompt": "x", "response_a": "y"},
        {"pair_id": "odd", "prompt": "x", "response_a": "y", "response_b": "z", "label": "maybe"},
    ]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    env = {**os.environ, "COLUMNS": "250"}

    def cli(*args):
        return subprocess.run(
            [EXE, *args, "-w", "w.duckdb"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    ingested = cli("ingest", "pairs.jsonl", "-c", "pairs")
    assert ingested.returncode == 1 and "2 rows" in ingested.stderr  # the two bad pairs, each named in quarantine
    quarantine = (tmp_path / "corpora/pairs/quarantine.jsonl").read_text()
    assert "pair without response_b" in quarantine and "label 'maybe' is not one of a, b, tie" in quarantine
    server = thread_judge_server()
    judged = cli("pairwise", "-c", "pairs", "-r", "llm-slop", "--base-url", server.base_url)
    assert judged.returncode == 0, judged.stderr
    assert "llm-slop-pairwise on pairs" in judged.stdout and "position bias" in judged.stdout
    assert "ranking by meta-talk (Bradley-Terry" in judged.stdout
    win = rows(
        tmp_path / "w.duckdb",
        "SELECT system, comparisons, win_rate FROM pair_win_rates WHERE criterion_id = 'meta-talk' ORDER BY system",
    )
    assert [(s, n) for s, n, _ in win] == [("alpha", 6), ("beta", 6)]
    assert win[0][2] + win[1][2] == pytest.approx(1.0) and win[0][2] > win[1][2]  # alpha's answers carry no meta-talk
    assert win[0][2] == pytest.approx(1.0)  # reference: alpha's answers never carry meta-talk, beta's always do
    page = cli("report", "pairwise", "-c", "pairs", "-r", "llm-slop", "--out", "pairs.html")
    assert page.returncode == 0, page.stderr
    text = (tmp_path / "pairs.html").read_text()
    assert "position_bias" in text and "<img" in text and "alpha" in text and "Bradley-Terry" in text
    assert "<script" not in text and "http" not in text.split("<style>")[0]


def test_pairs_land_exactly_once_after_a_kill_and_a_panel_runs_as_one_flow(tmp_path, thread_judge_server):
    """kill -9 mid-run, run again: every pair in both orders lands once; then two offline judges
    (personas) judge the pairs as one panel flow."""

    from rubricflow.flows.panel import panel_flow

    server = thread_judge_server(latency_ms=40)
    pairs = [
        {
            "pair_id": f"p{i:03d}",
            "prompt": f"Question {i}?",
            "response_a": f"A short answer {i}.",
            "response_b": f"Certainly! Moreover, answer {i} plays a vital role. I hope this helps.",
        }
        for i in range(40)
    ]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(tmp_path / "pairs.jsonl"), str(warehouse), "pairs")
    proc = subprocess.Popen(
        [
            EXE,
            "pairwise",
            "-c",
            "pairs",
            "-r",
            "llm-slop",
            "-w",
            str(warehouse),
            "--base-url",
            server.base_url,
            "--shard-size",
            "10",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    kill_once_answered(proc, server, 30)
    assert 0 < rows(warehouse, "SELECT count(*) FROM completions")[0][0] < 80
    version = Library().bundle("llm-slop").rubric.metadata.version
    rubric = tmp_path / "rubrics" / f"llm-slop-pairwise@{version}.yaml"
    runs = panel_flow(
        "pairs",
        str(rubric),
        str(warehouse),
        [{"base_url": server.base_url}, {"base_url": server.base_url, "model": "second-judge"}],
    )
    assert len(runs) == 2 and runs[0]["planned_cells"] == runs[1]["planned_cells"] == 80
    assert rows(
        warehouse, "SELECT count(*), count(DISTINCT cell_key), count(DISTINCT judge_hash) FROM completions"
    ) == [(160, 160, 2)]
    assert rows(
        warehouse, "SELECT count(*), count(DISTINCT (pair_id, criterion_id, judge_hash)) FROM pair_verdicts"
    ) == [(240, 240)]  # 40 pairs x 3 criteria x 2 judges, each with both orders
