"""G18: credentials in a URL are refused by their shape, wherever they sit, so they never reach
runs.parameters or Prefect."""

import pytest
from pydantic import ValidationError

from rubricflow.tasks.judging.config import JudgeConfig


@pytest.mark.parametrize(
    "url",
    [
        "https://api.example.com/v1?subscription-key=abc123",
        "https://api.example.com/v1;key=abc123",
        "https://api.example.com/v1#token=abc123",
        "https://api.example.com/v1?X-Auth-Token=abc123",
        "https://api.example.com/v1?sig=abc123&v=2",
    ],
)
def test_a_base_url_carrying_a_credential_is_refused(url):
    with pytest.raises(ValidationError, match="credentials"):
        JudgeConfig(base_url=url)


def test_a_limits_url_carrying_a_password_parameter_is_refused():
    with pytest.raises(ValidationError, match="password"):
        JudgeConfig(limits_url="postgresql://u@127.0.0.1/db?sslpassword=hunter2")


@pytest.mark.parametrize(
    "url",
    ["https://api.example.com/v1", "https://api.example.com/v1?api-version=2024-06-01", "http://127.0.0.1:8080/v1/"],
)
def test_a_plain_url_is_accepted(url):
    assert JudgeConfig(base_url=url).base_url == url
    assert JudgeConfig(limits_url="postgresql://u@127.0.0.1/db?sslmode=require&connect_timeout=5").limits_url
