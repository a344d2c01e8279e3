"""The `verifiers` bridge with the real package: a rubric and the offline judge as the reward of a
SingleTurnEnv, scored through verifiers' own rubric machinery, equal to judge.evaluate."""

import asyncio

import pytest

import rubricflow as rf

vf = pytest.importorskip("verifiers")
datasets = pytest.importorskip("datasets")

REPLIES = [
    "The council met on Tuesday and approved the road budget by seven votes to two.",
    "Certainly! Nestled in the heart of town, this vibrant place plays a vital role. I hope this helps.",
]


@pytest.mark.slow
def test_a_verifiers_environment_is_rewarded_by_the_rubric_and_judge():
    with rf.Judge.offline(strategy="holistic") as judge:
        questions = datasets.Dataset.from_list([{"question": "What happened at the council?", "answer": ""}] * 2)
        env = rf.verifiers_env("llm-slop", judge, questions, system_prompt="Answer in one sentence.")
        assert isinstance(env, vf.SingleTurnEnv) and isinstance(env.rubric, vf.Rubric)
        assert [f.__name__ for f in env.rubric.get_reward_funcs()] == ["rubricflow_llm_slop"]
        prompts = [[{"role": "user", "content": "What happened at the council?"}]] * 2
        completions = [[{"role": "assistant", "content": t}] for t in REPLIES]
        scored = asyncio.run(
            env.rubric.score_rollouts(prompts, completions, ["", ""], [{}, {}], ["default"] * 2, [{}, {}])
        )
        expected = [judge.evaluate("llm-slop", t, input="What happened at the council?").score for t in REPLIES]
        assert scored.reward == pytest.approx(expected) and scored.reward[0] > scored.reward[1]
        with pytest.raises(rf.InputError, match="no assistant text"):
            asyncio.run(rf.reward_function("llm-slop", judge)(prompt=prompts[0], completion=[]))
