"""The judge setup refuses settings that would silently mean something else."""

import pytest

from rubricflow.tasks.judging.config import JudgeConfig


@pytest.mark.parametrize("field", ["rpm", "tpm"])
def test_a_zero_rate_limit_is_refused_not_taken_as_unlimited(field):
    with pytest.raises(ValueError, match="greater than 0"):
        JudgeConfig(**{field: 0})


@pytest.mark.parametrize("temperature", [float("nan"), float("inf"), -0.5, 7.0])
def test_a_temperature_no_endpoint_takes_is_refused_before_any_call(temperature):
    """F29: `--temperature nan` was accepted, then every call failed and the endpoint was blamed."""
    with pytest.raises(ValueError, match="temperature"):
        JudgeConfig(temperature=temperature)


@pytest.mark.parametrize("query", ["code=abc123secret", "x-api-key=abc123secret", "auth=abc123secret"])
def test_a_credential_in_the_base_urls_query_is_refused(query):
    """N20: `?code=` (Azure Functions) and `?x-api-key=` passed the check and were stored with the run."""
    with pytest.raises(ValueError, match="carries credentials"):
        JudgeConfig(base_url=f"http://127.0.0.1:9/v1?{query}")


@pytest.mark.parametrize("limit", [{"rpm": 60}, {"tpm": 10_000}])
def test_a_rate_limit_on_a_cluster_needs_the_shared_limits_database(limit, monkeypatch):
    """G8: every judge setup is checked (the CLI's, the Python API's, the flow's), not only the flow's."""
    monkeypatch.delenv("RUBRICFLOW_LIMITS_URL", raising=False)
    with pytest.raises(ValueError, match="need --limits"):
        JudgeConfig(cluster="tls://10.0.0.5:8786", **limit)
    monkeypatch.setenv("RUBRICFLOW_DASK_ADDRESS", "tls://10.0.0.5:8786")  # the cluster named by the environment
    with pytest.raises(ValueError, match="need --limits"):
        JudgeConfig(**limit)
    assert JudgeConfig(limits_url="postgresql://u@db/limits", **limit).rpm == limit.get("rpm")
