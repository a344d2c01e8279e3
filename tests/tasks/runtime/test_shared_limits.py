"""The shared rate-limit buckets: one bucket per endpoint however its URL is spelled (G7), and a
corrupt bucket file is named, started afresh and rewritten instead of failing every run (G9)."""

import json
import logging

import pytest

from rubricflow.tasks.runtime.lease import SharedQuota, bucket_key


@pytest.mark.parametrize(
    "spelling",
    [
        "https://api.example.com/v1/",
        "HTTPS://API.Example.com/v1",
        "https://api.example.com:443/v1",
        "https://api.example.com:443/v1//",
    ],
)
def test_one_endpoint_spelled_differently_is_one_bucket(spelling):
    assert bucket_key(spelling, "sk-1", "rpm") == bucket_key("https://api.example.com/v1", "sk-1", "rpm")


def test_localhost_and_127_0_0_1_are_one_bucket_and_other_ports_or_keys_are_not():
    assert bucket_key("http://localhost:8080/v1/", "k", "rpm") == bucket_key("http://127.0.0.1:8080/v1", "k", "rpm")
    assert bucket_key("http://127.0.0.1:80/v1", "k", "rpm") == bucket_key("http://127.0.0.1/v1", "k", "rpm")
    assert bucket_key("http://127.0.0.1:8081/v1", "k", "rpm") != bucket_key("http://127.0.0.1:8080/v1", "k", "rpm")
    assert bucket_key("http://127.0.0.1:8080/v1", "k2", "rpm") != bucket_key("http://127.0.0.1:8080/v1", "k", "rpm")
    assert bucket_key("http://127.0.0.1:8080/v2", "k", "rpm") != bucket_key("http://127.0.0.1:8080/v1", "k", "rpm")


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b'{"level": "x", "stamp": 1}', b"\xff\xfe"])
def test_a_corrupt_bucket_file_is_named_and_started_afresh(tmp_path, content, caplog):
    path = tmp_path / "limits" / "bucket.json"
    path.parent.mkdir()
    path.write_bytes(content)
    now = [1000.0]
    quota = SharedQuota(path, per_minute=600, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="rubricflow"):
        assert quota.lease(1) == 0.0  # started empty, like a new bucket
    assert str(path) in caplog.text
    assert json.loads(path.read_bytes()) == {"level": 0.0, "stamp": 1000.0}  # rewritten
    now[0] += 1.0
    assert quota.lease(1) == pytest.approx(5.0)  # and it works from then on (chunk: half a second of 10/s)
