"""`improve evolve` on real human labels (Topical-Chat) with the offline judge and its reflection
mode: rounds cost only their changed criteria's calls, an accepted candidate agrees better held out
(recomputed here from the raw rows), a re-run resumes instead of paying again, a malformed reflection
answer is refused and counted, and a run killed mid-round resumes that round."""

import json
import os
import subprocess
import time

import duckdb
import numpy as np

from rubricflow.flows.evolve import evolve_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import load_rubric
from rubricflow.tasks.improve.evolve import split
from rubricflow.tasks.improve.objectives import NOISE
from rubricflow.tasks.loaders.labels import import_topical_chat
from rubricflow.tasks.presentation.report import evolution_report
from tests.conftest import EXE, ROOT, SHARED, kill_once_answered, rows

RUBRIC = str(ROOT / "flows" / "samples" / "topical-chat-dialogue.yaml")
TOPICAL_CHAT = SHARED / "calibration" / "topical_chat"


def small_topical_chat(tmp_path, n: int = 60):
    """The first `n` texts of the Topical-Chat release, as a release folder of their own (a round costs n calls)."""
    folder = tmp_path / f"tc{n}"
    folder.mkdir()
    release = json.loads((TOPICAL_CHAT / "judge_predictions.json").read_text())
    (folder / "judge_predictions.json").write_text(json.dumps(release[:n]))
    return folder


def held_out_pearson(warehouse, rubric_hash: str, texts: list[str]) -> float:
    pairs = rows(
        warehouse,
        "SELECT s.score, avg(l.score) FROM text_scores s JOIN labels l ON l.corpus_id = s.corpus_id "
        "AND l.text_id = s.text_id AND l.rater = 'human' AND l.criterion_id = 'overall' "
        "WHERE s.rubric_hash = ? AND list_contains(?, s.text_id) GROUP BY s.text_id, s.score",
        [rubric_hash, texts],
    )
    judge, human = np.array(pairs).T
    return float(np.corrcoef(judge, human)[0, 1])


def test_three_rounds_pay_only_for_changed_criteria_and_a_rerun_pays_nothing(tmp_path, thread_judge_server):
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    import_topical_chat(small_topical_chat(tmp_path, 120), "tc", warehouse)  # a round judges 120 cells
    args = (
        "tc",
        RUBRIC,
        warehouse,
        ["human"],
        "overall",
        {"base_url": server.base_url},
        None,
        3,
        None,
        3,  # the seed of the split
        0.2,
        0.2,
        str(tmp_path / "evo"),
    )
    result = evolve_flow(*args)
    rounds = result["rounds"]
    assert [r["round"] for r in rounds] == [1, 2, 3] and result["first_run_calls"] == 600  # 120 texts x 5 criteria
    for r in rounds:
        assert r["status"] in ("accepted", "rejected") and r["changed_criteria"] >= 1
        assert r["calls"] <= r["changed_criteria"] / r["total_criteria"] * r["full_rescore_calls"]  # the bound
    accepted = [r for r in rounds if r["status"] == "accepted"]
    assert accepted and result["best"] == accepted[-1]["candidate_hash"] != result["start"]
    recorded = rows(warehouse, "SELECT round, status, metric_before, metric_after FROM evolution_rounds ORDER BY round")
    assert [(r[0], r[1]) for r in recorded] == [(r["round"], r["status"]) for r in rounds]
    for _number, status, before, after in recorded:
        assert (after > before + NOISE) == (status == "accepted")  # a rise of float noise is no rise
    # N6: rounds were accepted on validation texts; the test texts were never looked at until the end.
    # Both figures recomputed from the raw rows with the same split.
    con = duckdb.connect(warehouse, read_only=True)
    texts = split(con, "tc", ["human"], "overall", 3, 0.2, 0.2)
    con.close()
    parts = (set(texts.train), set(texts.validation), set(texts.test))
    assert [len(p) for p in parts] == [72, 24, 24] and not (
        parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2]
    )
    assert abs(held_out_pearson(warehouse, result["best"], texts.validation) - accepted[-1]["metric_after"]) < 1e-9
    assert abs(held_out_pearson(warehouse, result["best"], texts.test) - result["test_best"]) < 1e-9
    assert abs(held_out_pearson(warehouse, result["start"], texts.test) - result["test_start"]) < 1e-9
    # recomputed at the end from the same rows: equal up to the order DuckDB sums them in
    assert abs(result["validation_best"] - accepted[-1]["metric_after"]) < 1e-12
    stored = rows(warehouse, "SELECT best_hash, test_best, reflection_hash IS NOT NULL FROM evolutions")
    assert stored == [(result["best"], result["test_best"], True)]
    assert compile_or_raise(load_rubric(result["best_file"])).hash == result["best"]

    con = duckdb.connect(warehouse, read_only=True)
    page = evolution_report(con, result["evolution_id"])
    con.close()
    assert page.count("<img") == 1 and all(f'<td class="t">{r["status"]}</td>' in page for r in rounds)

    answered = server.stats()["answered"]
    again = evolve_flow(*args)  # the same command: every round is replayed from the warehouse
    assert server.stats()["answered"] == answered and again["calls_this_run"] == 0 and again["calls"] == result["calls"]
    assert again["best"] == result["best"] and [r["status"] for r in again["rounds"]] == [r["status"] for r in rounds]


def test_malformed_reflection_answers_are_refused_and_counted(tmp_path, thread_judge_server):
    judge, reflection = (
        thread_judge_server(),
        thread_judge_server(fault_rate=1, faults=("malformed", "wrong_keys"), fault_attempts=100),
    )
    warehouse = str(tmp_path / "w.duckdb")
    import_topical_chat(TOPICAL_CHAT, "tc", warehouse)
    result = evolve_flow(
        "tc",
        RUBRIC,
        warehouse,
        ["human"],
        "overall",
        {"base_url": judge.base_url},
        {"base_url": reflection.base_url},
        2,
        None,
        0,
        0.2,
        0.2,
        str(tmp_path / "evo"),
    )
    assert [r["status"] for r in result["rounds"]] == ["refused", "refused"] and result["calls"] == 0
    reasons = rows(warehouse, "SELECT reason FROM evolution_rounds ORDER BY round")
    assert all(r[0].startswith(("not JSON", "expected {", "not valid mutations")) for r in reasons), reasons
    assert result["best"] == result["start"]


def test_a_run_killed_mid_round_resumes_that_round(tmp_path, thread_judge_server):
    fast, slow = thread_judge_server(), thread_judge_server(latency_ms=100)
    warehouse = tmp_path / "w.duckdb"
    import_topical_chat(small_topical_chat(tmp_path), "tc", str(warehouse))  # 60 texts: a round judges 60 cells
    score_corpus("tc", RUBRIC, str(warehouse), {"base_url": fast.base_url, "strategy": "per_criterion"})

    def evolve(base_url: str, **kw) -> subprocess.Popen:
        return subprocess.Popen(
            [
                EXE,
                "improve",
                "evolve",
                "-c",
                "tc",
                "-r",
                RUBRIC,
                "--base-url",
                base_url,
                "--max-rounds",
                "1",
                "--max-in-flight",
                "4",
                "--shard-size",
                "5",
                "-w",
                str(warehouse),
                "--output-dir",
                str(tmp_path / "evo"),
            ],
            cwd=tmp_path,
            env={**os.environ, "COLUMNS": "200"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **kw,
        )

    proc = evolve(slow.base_url, start_new_session=True)
    kill_once_answered(proc, slow, 20, timeout_s=180)  # mid-round: the proposal is recorded, the candidate half judged
    time.sleep(1)  # the forked run ends with its caller
    [(status, created, mutations, candidate)] = rows(
        warehouse, "SELECT status, created_at, mutations, candidate_hash FROM evolution_rounds"
    )
    assert status == "proposed"
    judged_before = rows(
        warehouse, "SELECT count(*) FROM completions WHERE rubric_hash = ? AND adopted_from IS NULL", [candidate]
    )[0][0]
    assert 0 < judged_before < 60

    done = evolve(fast.base_url)
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    [(status, created_again, mutations_again, candidate_again, calls)] = rows(
        warehouse, "SELECT status, created_at, mutations, candidate_hash, calls FROM evolution_rounds"
    )
    assert status in ("accepted", "rejected") and (created_again, mutations_again, candidate_again) == (
        created,
        mutations,
        candidate,
    )  # the same round, not a new proposal
    assert rows(
        warehouse,
        "SELECT count(*), count(DISTINCT cell_key) FROM completions WHERE rubric_hash = ? AND adopted_from IS NULL",
        [candidate],
    ) == [(60, 60)]  # each changed cell judged once
    assert calls <= 60 - judged_before + 5  # the resumed round paid for what was missing (and the shard cut off)


def test_two_identical_seeded_runs_pick_the_same_criteria(tmp_path, thread_judge_server):
    """#50 item 6: two identical evolve runs picked different criteria (criteria that agree equally
    were ordered by DuckDB's parallel sums); each run here has a warehouse of its own."""
    server = thread_judge_server()
    release = small_topical_chat(tmp_path, 30)
    picked = []
    for name in ("a", "b"):
        warehouse = str(tmp_path / f"{name}.duckdb")
        import_topical_chat(release, "tc", warehouse)
        judge = {"base_url": server.base_url}
        result = evolve_flow("tc", RUBRIC, warehouse, ["human"], "overall", judge, None, 2, None, 3, 0.2, 0.2,
                             str(tmp_path / f"evo-{name}"))  # fmt: skip
        picked.append([(r["round"], r["criterion"], r["status"], r.get("candidate_hash")) for r in result["rounds"]])
    assert picked[0] == picked[1] and len(picked[0]) == 2, picked
