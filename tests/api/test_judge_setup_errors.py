"""rf.Judge.evaluate on a setup no retry fixes raises what Warehouse.score raises (EndpointRefused),
not a result with score None and the reason only in `errors`."""

from __future__ import annotations

import socket

import pytest

import rubricflow as rf
from rubricflow.errors import EndpointRefused, InputError
from rubricflow.tasks.standins.judge_server import RunningServer

FAST = {"max_attempts": 2, "timeout_s": 1, "call_deadline_s": 3}


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_a_closed_port_raises_the_error_warehouse_score_raises():
    from rubricflow.flows.score import EndpointRefused as raised_by_score

    assert raised_by_score is EndpointRefused
    judge = rf.Judge(base_url=f"http://127.0.0.1:{closed_port()}/v1", **FAST)
    with pytest.raises(EndpointRefused, match=r"no usable answer to every call \(1 cells; no connection"):
        judge.evaluate("llm-slop", "The council met on Tuesday.")


def test_a_wrong_path_raises_naming_the_404_for_one_text_and_many():
    with RunningServer() as server:
        judge = rf.Judge(base_url=server.base_url.removesuffix("/v1") + "/wrong", **FAST)
        with pytest.raises(EndpointRefused, match="NotFoundError 404"):
            judge.evaluate("llm-slop", "The council met on Tuesday.")
        with pytest.raises(EndpointRefused, match="2 cells"):
            judge.evaluate_many("llm-slop", ["One text.", "Another text."])


def test_a_url_without_a_scheme_is_refused_before_any_call():
    with pytest.raises(InputError, match="'127.0.0.1:8765/v1' is not an http:// or https:// URL with a host"):
        rf.Judge(base_url="127.0.0.1:8765/v1")
