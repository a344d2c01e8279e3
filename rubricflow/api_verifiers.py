"""A bridge to the `verifiers` library (RL environments): a rubric and a judge as a reward function,
a `vf.Rubric` and a single-turn `vf.SingleTurnEnv` (`pip install rubricflow[verifiers]`).

Each reward is one `judge.aevaluate` of the rollout's last assistant message (the request: the last
user message of the prompt; `info` may carry `context` and `genre`), through the same hardened
client as every other judge call; the reward is the rubric's score in [0, 1] (a disqualified text
scores 0). A rollout the judge could not score raises, so verifiers logs it (as a 0) instead of a
silent 0 that looks like a verdict."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from rubricflow.api_judge import Judge
from rubricflow.api_rubric import RubricLike, load_rubric
from rubricflow.errors import InputError, TransientError

Reward = Callable[..., Awaitable[float]]


def reward_function(rubric: RubricLike, judge: Judge) -> Reward:
    """An async reward function as verifiers calls one: `(prompt, completion, info, **kwargs) -> float`."""
    bundle = load_rubric(rubric)

    async def reward(prompt: Any = None, completion: Any = None, info: dict | None = None, **_: Any) -> float:
        text = _last(completion, "assistant")
        if not text:
            raise InputError("the rollout's completion has no assistant text to judge")
        info = info or {}
        r = await judge.aevaluate(
            bundle, text, input=_last(prompt, "user"), context=info.get("context"), genre=info.get("genre")
        )
        if r.score is None:
            raise TransientError(
                f"{bundle.id}: the judge scored nothing: {'; '.join(r.errors) or 'no criterion scored'}"
            )
        return r.score

    reward.__name__ = f"rubricflow_{bundle.id.replace('-', '_')}"
    return reward


def verifiers_rubric(rubric: RubricLike, judge: Judge, weight: float = 1.0) -> Any:
    """A `verifiers.Rubric` whose one reward function is the rubric judged by `judge`."""
    import verifiers as vf

    return vf.Rubric(funcs=[reward_function(rubric, judge)], weights=[weight])


def verifiers_env(rubric: RubricLike, judge: Judge, dataset: Any, system_prompt: str | None = None, **env: Any) -> Any:
    """A `verifiers.SingleTurnEnv` over `dataset` (a datasets.Dataset with `question`, or `prompt`)
    rewarded by the rubric and judge."""
    import verifiers as vf

    return vf.SingleTurnEnv(dataset=dataset, system_prompt=system_prompt, rubric=verifiers_rubric(rubric, judge), **env)


def _last(messages: Any, role: str) -> str | None:
    """The text of the last message of `role` (a plain string counts as that message)."""
    if isinstance(messages, str):
        return messages
    for message in reversed(messages or []):
        if isinstance(message, dict) and message.get("role") == role and isinstance(message.get("content"), str):
            return message["content"]
    return None
