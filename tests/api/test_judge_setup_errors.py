"""rf.Judge.evaluate on a setup no retry fixes raises what Warehouse.score raises (EndpointRefused),
not a result with score None and the reason only in `errors`; seed 001's own proxy example (its
`baseUrl` pointed at a closed port, or at a host that cannot exist) raises rather than returning a
judgment with no score."""

from __future__ import annotations

import re
import socket
import sys

import pytest

import rubricflow as rf
from rubricflow.errors import EndpointRefused, InputError
from rubricflow.tasks.standins.judge_server import RunningServer

from ..conftest import SHARED

SEED_001 = (SHARED.parent / "seeds" / "001_646671bcea772b80.txt").read_text(encoding="utf-8")

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


def seed_python_after(heading: str) -> str:
    """The first ```python block after `heading` in seed 001, as written, its imports ported as
    tests/api/test_rubrify_port.py ports them (the only edit the seed's examples need)."""
    after = SEED_001[SEED_001.index(heading) :]
    code = re.search(r"```python\n(.*?)```", after, re.S).group(1)
    return re.sub(r"from (rubrify|harn_ai)[\w.]* import", "from rubricflow.rubrify import", code)


def run_seed_proxy_example(base_url: str) -> dict:
    """Seed 001's "Define and compile a rubric", then "Use a custom OpenAI-compatible proxy" with its
    `http://localhost:8000/v1` replaced by `base_url`, then the judgment line of "Run a judgment"."""
    names: dict = {}
    exec(seed_python_after("### Define and compile a rubric"), names)  # noqa: S102 (the seed's own text)
    run_a_judgment = seed_python_after("### Run a judgment").splitlines()
    exec("\n".join(line for line in run_a_judgment if line.startswith(("import ", "from "))), names)  # noqa: S102
    proxy = seed_python_after("### Use a custom OpenAI-compatible proxy")
    assert '"baseUrl": "http://localhost:8000/v1"' in proxy
    exec(proxy.replace("http://localhost:8000/v1", base_url), names)  # noqa: S102
    judgment = next(line for line in run_a_judgment if "judge.evaluate(" in line)
    assert judgment == 'judgment = asyncio.run(judge.evaluate(bundle, "The response text to evaluate."))'
    exec(judgment, names)  # noqa: S102
    return names


def test_the_seeds_proxy_example_on_a_closed_port_raises_endpoint_refused(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-offline")  # restored after: the example sets api_key="your-key"
    with pytest.raises(EndpointRefused, match=r"no usable answer to every call \(1 cells; .*Connect call failed"):
        run_seed_proxy_example(f"http://127.0.0.1:{closed_port()}/v1")


LOOKED_UP: list[str] = []
HOOKED: list = []


def _record_lookups(event: str, args: tuple) -> None:
    if event in ("socket.getaddrinfo", "socket.gethostbyname") and "invalid" in str(args[0]):
        LOOKED_UP.append(str(args[0]))


def test_an_unknown_host_under_invalid_is_refused_before_any_lookup_or_call(monkeypatch):
    """RFC 6761: a name under .invalid never resolves, so no DNS query for it leaves the machine;
    rf.Judge and seed 001's example (and so Warehouse.score, which takes the same Judge) refuse it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-offline")
    if _record_lookups not in HOOKED:  # an audit hook sees every name lookup here (hooks stay for the process)
        sys.addaudithook(_record_lookups)
        HOOKED.append(_record_lookups)
    LOOKED_UP.clear()
    with pytest.raises(InputError, match=r"the host 'judge\.invalid' cannot exist \(RFC 6761\)"):
        rf.Judge(base_url="http://judge.invalid/v1")
    with pytest.raises(InputError, match=r"the host 'judge\.invalid' cannot exist"):
        run_seed_proxy_example("http://judge.invalid/v1")
    assert LOOKED_UP == []
    with pytest.raises(socket.gaierror):  # the hook does see a lookup (numeric-only: no query is sent)
        socket.getaddrinfo("seen.invalid", None, flags=socket.AI_NUMERICHOST)
    assert LOOKED_UP == ["seen.invalid"]
