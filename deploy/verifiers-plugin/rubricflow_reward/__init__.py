"""A verifiers 0.4 judge plugin (`judges: [{id: rubricflow_reward, rubric: llm-slop}]`) whose reward is
a rubricflow rubric's score, bought from a running `rubricflow reward-server` over HTTP. The reward is
the rubric's score in [0, 1]; each criterion's score is recorded as a metric `<name>/<criterion>`.
`view: full_trace` sends the whole branch from the agent's first turn on (its replies, tool calls of
either kind and their results, and any later user turn; not what the prompt supplied) to be judged as a
transcript; `last_reply` (the default) sends the agent's last reply. The prompt goes as its messages:
the server reads the last user text of it. A rollout the server's screens catch (an empty reply, a
note to the grader) gets reward 0 and each screen's name as a metric `<name>/flag/<screen>` = 1.
The server's secret is read from `secret_file` (default: rubricflow's state folder,
`~/.cache/rubricflow/reward-server.secret`); the inherited `timeout.connect` bounds the connection,
`timeout_s` the answer, and `headers` and `headers_from_env` are sent too (the inherited `base_url` is
not read: `url` is the server's address). A media part (an image, audio, a file) goes as its type
alone: the server reads none of its bytes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import httpx
from verifiers.v1.configs.judge import JudgeConfig
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.judge import Judge
from verifiers.v1.task import TaskData
from verifiers.v1.trace import Trace

__all__ = ["RubricflowJudge", "RubricflowJudgeConfig"]


class RubricflowJudgeConfig(JudgeConfig):
    url: str = "http://127.0.0.1:8790"
    """The reward server (`rubricflow reward-server` prints it)."""
    rubric: str = ""
    """A rubric the server can load (a library name or a file on its machine); empty: the server's own."""
    view: Literal["last_reply", "full_trace"] = "last_reply"
    secret_file: str = ""
    """The file holding the server's secret; empty: rubricflow's default state folder."""
    timeout_s: float = 600.0


class RubricflowJudge(Judge[float, RubricflowJudgeConfig]):
    async def score(self, task: TaskData, trace: Trace) -> float:
        """The rubric's reward for this trace; its criteria (and any screen's flag) go to the trace's metrics."""
        config = self.config
        body: dict[str, Any] = {"rollouts": [rollout(task, trace, config.view)], "view": config.view}
        if config.rubric:
            body["rubric"] = config.rubric
        from_env = {name: os.environ[var] for name, var in config.headers_from_env.items() if var in os.environ}
        headers = {**config.headers, **from_env, "Authorization": f"Bearer {secret(config.secret_file)}"}
        timeout = httpx.Timeout(config.timeout_s, connect=config.timeout.connect or config.timeout_s)
        async with httpx.AsyncClient(timeout=timeout) as client:
            answer = await client.post(config.url.rstrip("/") + "/v1/rewards", json=body, headers=headers)
        if answer.status_code != 200:
            raise RuntimeError(f"rubricflow reward server answered {answer.status_code}: {answer.text[:500]}")
        [result] = answer.json()["results"]
        if result["reward"] is None:
            raise RuntimeError(f"rubricflow reward server scored nothing: {result.get('error')}")
        name = self.reward_name
        trace.record_metrics({f"{name}/{k}": v for k, v in result["criteria"].items() if v is not None})
        trace.record_metrics({f"{name}/flag/{flag}": 1.0 for flag in result.get("flags") or ()})
        return float(result["reward"])


def rollout(task: TaskData, trace: Trace, view: str) -> dict[str, Any]:
    """The trace as the server reads a rollout: the task's prompt and the agent's part of the branch
    (or its last reply). A task with no prompt (verifiers' user_sim: a simulated user's turn opens
    the conversation) has the turns before the agent's first as its prompt: sent as None, the judge
    never saw the question."""
    nodes = trace.branches[-1].nodes if trace.branches else []
    first = next((i for i, node in enumerate(nodes) if node.sampled), len(nodes))
    completion: Any = trace.last_reply
    if view == "full_trace":
        completion = [wire(node.message) for node in nodes[first:]]
    prompt: Any = task.prompt
    if prompt is None:
        prompt = [wire(node.message) for node in nodes[:first]] or None
    elif not isinstance(prompt, str):
        prompt = [wire(m) for m in prompt]
    return {"id": trace.id, "prompt": prompt, "completion": completion}


# Parts whose payload the server never reads (it writes each as `[image_url]`): sent whole, nine 8 MiB
# screenshots were over its 64 MiB body and the trace got no reward.
PAYLOAD_PARTS = {"image_url", "input_image", "image", "input_audio", "audio", "file", "input_file", "video_url"}


def wire(message: Any) -> dict:
    """A message as the chat API writes it, each media part as its type alone."""
    out = message_to_wire(message)
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [
            {"type": part["type"]} if isinstance(part, dict) and part.get("type") in PAYLOAD_PARTS else part
            for part in content
        ]
    return out


def secret(path: str) -> str:
    if not path:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        path = os.environ.get("RUBRICFLOW_STATE_DIR") or str(Path(cache) / "rubricflow")
        path = str(Path(path) / "reward-server.secret")
    return Path(path).read_text().strip()
