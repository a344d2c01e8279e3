"""Warnings: a judge call raises none (openai deprecated raw bytes as `body`, and the release that
removes it breaks every call), and one raised from rubricflow's own modules fails the suite
(pyproject.toml's filterwarnings), whichever repository folder the module lives in."""

import asyncio
import warnings

import pytest
from openai import AsyncOpenAI

from rubricflow.tasks.judging import judge, transport
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from rubricflow.warehouse import db


def test_a_judge_call_over_http_raises_no_warning():
    body = {"model": "m", "messages": [{"role": "user", "content": "Reply with OK."}], "max_tokens": 8}
    with RunningServer(ServerConfig()) as server:

        async def call():
            client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
            try:
                return await transport.post_chat(client, body, timeout_s=30)
            finally:
                await client.close()

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            answer = asyncio.run(call())
    assert answer.choices[0].message is not None
    assert [str(w.message) for w in caught] == []
    assert server.app.stats.answered == 1


def warn_from(module) -> None:
    """A warning issued by code of `module` (its name and file), as its own `warnings.warn` would."""
    code = compile("import warnings\nwarnings.warn('said by ' + __name__, DeprecationWarning)", module.__file__, "exec")
    exec(code, {"__name__": module.__name__})


@pytest.mark.parametrize("module", [judge, db], ids=["tasks/judging/judge.py", "warehouse/db.py"])
def test_a_warning_from_a_rubricflow_module_fails_the_test(module):
    with pytest.raises(DeprecationWarning, match="said by rubricflow"):
        warn_from(module)


def test_a_warning_from_a_library_is_left_as_a_warning():
    with pytest.warns(DeprecationWarning, match="said by somelibrary"):
        exec(
            compile("import warnings\nwarnings.warn('said by ' + __name__, DeprecationWarning)", "lib.py", "exec"),
            {"__name__": "somelibrary"},
        )
