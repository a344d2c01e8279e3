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
