"""Run inside a virtualenv with verifiers 0.4 and the plugin (`.ci/verifiers`): a real verifiers Task,
its judge plugged by config (`judges: [{id: rubricflow_reward}]`), scores traces (one a tool-using
agent's) through verifiers' own `Task.score`; prints each trace's rewards and metrics as JSON.

    python vf_rollouts.py <reward server url> <rollouts.json>"""

import asyncio
import json
import sys

import verifiers.v1 as vf1
from verifiers.v1.configs.agent import AgentConfig
from verifiers.v1.graph import MessageNode
from verifiers.v1.task import Task, TaskConfig, TaskData
from verifiers.v1.trace import AgentInfo, Trace, TraceTask
from verifiers.v1.types import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage


def prompt_of(r: dict) -> str | list | None:
    """The task's prompt: its text, or a system message and the text as messages (None: the
    conversation is opened by a user's turn in the trace)."""
    if "system" not in r:
        return r["prompt"]
    return [SystemMessage(content=r["system"]), UserMessage(content=r["prompt"])]


def trace_of(task: Task, prompt: str | list | None, turns: list[dict], opening: str | None = None) -> Trace:
    """The trace an agent leaves: the prompt (or a user's `opening` turn), then each turn (a reply, or
    a tool call, a function's or a custom one, and its result)."""
    given = [UserMessage(content=prompt if prompt is not None else opening)] if not isinstance(prompt, list) else prompt
    nodes = [MessageNode(parent=i - 1 if i else None, message=m) for i, m in enumerate(given)]
    for turn in turns:
        if "call" in turn:
            call = ToolCall(**turn["call"])
            nodes.append(
                MessageNode(
                    parent=len(nodes) - 1, message=AssistantMessage(content="", tool_calls=[call]), sampled=True
                )
            )
            nodes.append(
                MessageNode(parent=len(nodes) - 1, message=ToolMessage(tool_call_id=call.id, content=turn["result"]))
            )
        else:
            nodes.append(
                MessageNode(parent=len(nodes) - 1, message=AssistantMessage(content=turn["reply"]), sampled=True)
            )
    return Trace(
        task=TraceTask(type=type(task).__name__, data=task.data), agent=AgentInfo(config=AgentConfig()), nodes=nodes
    )


async def main(url: str, rollouts: list[dict]) -> dict:
    scored = {}
    for view in ("last_reply", "full_trace"):
        judge = {"id": "rubricflow_reward", "rubric": "llm-slop", "url": url, "view": view}
        for r in rollouts:
            task = Task(TaskData(prompt=prompt_of(r)), TaskConfig(judges=[judge]))
            trace = trace_of(task, prompt_of(r), r["turns"], r.get("opening"))
            await task.score(trace)
            scored[f"{view}/{r['id']}"] = {
                "reward": trace.rewards["rubricflow_reward"].score,
                "metrics": trace.metrics,
                "version": vf1.__name__,
            }
    return scored


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], json.load(open(sys.argv[2]))))))
