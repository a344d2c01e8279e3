"""A judge cascade and a sequential A/B on a Dask cluster (real scheduler and worker processes
over TLS): both judge through the score flow's shard path, so the cluster's worker makes every
call (the judge wants a key only the worker holds: a call from the flow's own process is
refused), cells landed by one are the other's cache (resume), and --budget with --cluster is
refused before any call, exactly as `score` refuses it."""

import pytest

from rubricflow.errors import InputError
from rubricflow.flows.cascade import cascade_flow
from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.sequential import sequential_compare_flow
from rubricflow.tasks.standins.cluster import DaskCluster
from tests.conftest import rows, write_corpus
from tests.flows.test_sequential import worse_version

STRONG, CHEAP = "rubricflow-offline-judge", "offline-cheap"
TEXTS = CALIBRATION = 16  # every text both judges' (the fewest runs: CI time); no new path is left out
REFUSED = "--budget and --batch run in the flow's process only: drop --cluster"


def test_a_cascade_and_a_sequential_ab_judge_on_the_cluster_and_reuse_its_cells(tmp_path, judge_server, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-workers-own")
    server = judge_server("--require-key-env", "JUDGE_KEY")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the flow's process has no key: only the worker can judge
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", TEXTS)), warehouse, "c")
    _, worse = worse_version(tmp_path)
    with DaskCluster(1, tmp_path / "dask", env={"OPENAI_API_KEY": "sk-workers-own"}) as cluster:
        for variable, path in cluster.tls_env.items():
            monkeypatch.setenv(variable, path)
        judge = {"base_url": server.base_url, "cluster": cluster.address}
        with pytest.raises(InputError, match=REFUSED):
            cascade_flow("c", "llm-slop", warehouse, {**judge, "budget_usd": 1.0}, CHEAP, STRONG, 0.8, 0.2, CALIBRATION)
        assert server.stats()["requests"] == 0  # refused before any call
        cascade = cascade_flow("c", "llm-slop", warehouse, judge, CHEAP, STRONG, 0.8, 0.2, CALIBRATION)
        strong = {**judge, "model": STRONG}  # side A: the cascade's strong judge, whose cells are the cache
        seq = sequential_compare_flow("c", "llm-slop", str(worse), warehouse, strong, strong, batch_size=TEXTS)
        with pytest.raises(InputError, match=REFUSED):  # refused although every text is judged: no run would start
            sequential_compare_flow("c", "llm-slop", str(worse), warehouse, strong, {**strong, "budget_usd": 1.0})
    assert cascade["unscored"] == 0 and cascade["calibration_texts"] == CALIBRATION
    assert seq["texts_paired"] == TEXTS and seq["estimate"] < 0  # B scores lower, every text judged on the cluster
    # each call once: both cascade judges on every text, then only B's (A's cells the cascade landed
    # are not bought again)
    assert server.stats()["requests"] == TEXTS + TEXTS + TEXTS
    landed = "SELECT count(*) = count(DISTINCT cell_key), count(*) FILTER (status <> 'ok') FROM completions"
    assert rows(warehouse, landed) == [(True, 0)]
