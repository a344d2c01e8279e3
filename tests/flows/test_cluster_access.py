"""Who may reach a run's Dask cluster (G1): a scheduler runs any client's code on workers that hold
the judge's key, so a run uses one only over TLS with the user's own certificates; plain tcp://
is refused (network address or loopback) unless the user opts in, in one line."""

import os
import subprocess

import pytest

from rubricflow.errors import InputError
from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.runtime.dask_access import INSECURE_VARIABLE, TLS_VARIABLES, cluster_security
from rubricflow.tasks.standins.cluster import DaskCluster, make_certificates
from tests.conftest import EXE, rows, write_corpus


@pytest.fixture
def no_cluster_env(monkeypatch):
    for variable in [*TLS_VARIABLES.values(), INSECURE_VARIABLE, "RUBRICFLOW_DASK_ADDRESS"]:
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize(
    ("address", "who"),
    [("tcp://10.0.0.5:8786", "anyone who reaches 10.0.0.5"), ("tcp://127.0.0.1:8786", "every user of this machine")],
)
def test_plain_tcp_is_refused_unless_the_user_opts_in(address, who, no_cluster_env, monkeypatch):
    with pytest.raises(InputError, match=who):
        cluster_security(address)
    monkeypatch.setenv(INSECURE_VARIABLE, "1")
    assert cluster_security(address) is None


def test_tls_needs_the_certificates_and_a_private_key(tmp_path, no_cluster_env, monkeypatch):
    with pytest.raises(InputError, match="RUBRICFLOW_DASK_TLS_CA"):
        cluster_security("tls://10.0.0.5:8786")
    certs = make_certificates(tmp_path / "tls")
    for part, variable in TLS_VARIABLES.items():
        monkeypatch.setenv(variable, certs[part])
    assert cluster_security("tls://10.0.0.5:8786").require_encryption
    os.chmod(certs["key"], 0o644)
    with pytest.raises(InputError, match="readable by other users"):
        cluster_security("tls://10.0.0.5:8786")


def test_score_refuses_a_plain_tcp_cluster_in_one_line(tmp_path, no_cluster_env):
    warehouse = tmp_path / "w.duckdb"
    corpus = write_corpus(tmp_path / "c.jsonl", 3)
    subprocess.run([EXE, "ingest", str(corpus), "-c", "c", "-w", str(warehouse)], check=True, capture_output=True)
    command = [EXE, "score", "-c", "c", "-r", "writing-quality", "-w", str(warehouse)]
    command += ["--base-url", "http://127.0.0.1:9/v1", "--cluster", "tcp://10.0.0.5:8786"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert "plain tcp://" in out and "Traceback" not in out
    assert len([line for line in out.splitlines() if "tcp://10.0.0.5" in line]) == 1


def test_a_tls_cluster_scores_and_a_stranger_cannot_connect(tmp_path, judge_server, no_cluster_env, monkeypatch):
    """A run over TLS lands every cell; a client with another CA's certificate (another user's)
    is refused by the scheduler, so it can neither run code on the workers nor read the queues."""
    from distributed import Client
    from distributed.security import Security

    server = judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 20)), warehouse, "c")
    with DaskCluster(1, tmp_path / "dask") as cluster:
        assert cluster.address.startswith("tls://")
        for variable, path in cluster.tls_env.items():
            monkeypatch.setenv(variable, path)
        run = score_corpus("c", "writing-quality", warehouse, {"base_url": server.base_url, "cluster": cluster.address})
        other = make_certificates(tmp_path / "stranger")
        stranger = Security(
            tls_ca_file=other["ca"], tls_client_cert=other["cert"], tls_client_key=other["key"], require_encryption=True
        )
        with pytest.raises((OSError, TimeoutError)):
            Client(cluster.address, timeout="3s", security=stranger, set_as_default=False)
    assert run["ok_cells"] == 20
    assert rows(warehouse, "SELECT count(*) FROM completions WHERE status = 'ok'") == [(20,)]


def test_rpm_on_a_cluster_without_shared_limits_is_refused(tmp_path, no_cluster_env):
    """G8: without --limits each worker machine keeps its own bucket: the key's limit is exceeded."""
    certs = make_certificates(tmp_path / "tls")
    env = {**os.environ, **{TLS_VARIABLES[part]: path for part, path in certs.items()}}
    env.pop("RUBRICFLOW_LIMITS_URL", None)
    command = [EXE, "score", "-c", "c", "-r", "writing-quality", "-w", str(tmp_path / "w.duckdb")]
    command += ["--base-url", "http://127.0.0.1:9/v1", "--cluster", "tls://127.0.0.1:9", "--rpm", "60"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    out = result.stdout + result.stderr
    assert result.returncode == 2 and "need --limits" in out and "Traceback" not in out, out
