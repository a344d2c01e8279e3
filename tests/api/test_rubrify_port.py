"""Seed 001's Python examples port to rubricflow by changing only their import lines
(`rubricflow.rubrify`): each is extracted from the seed's text and run, in order, in one session, as a
reader pasting them would, against the offline judge on 127.0.0.1."""

from __future__ import annotations

import ast
import asyncio
import re

import pytest

from rubricflow.tasks.standins.judge_server import RunningServer

from ..conftest import SHARED

SEED = (SHARED.parent / "seeds" / "001_646671bcea772b80.txt").read_text(encoding="utf-8")
PORTED = {  # the only edits: where each import comes from
    "from rubrify import": "from rubricflow.rubrify import",
    "from rubrify.ir.constraints import": "from rubricflow.rubrify import",
    "from rubrify.ir.roles import": "from rubricflow.rubrify import",
    "from harn_ai.models import": "from rubricflow.rubrify import",
    "from rubrify.evolve.evolver import": "from rubricflow.rubrify import",
    "from rubrify.evolve import": "from rubricflow.rubrify import",
}
NOT_PORTED = ("from dotenv import",)  # python-dotenv's own snippet, not rubrify's
EVOLUTION = "from rubrify.evolve"  # run by the slow test below (a Prefect flow per example)


def seed_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", SEED, re.S)


def ported(code: str) -> str:
    for old, new in PORTED.items():
        code = code.replace(old, new)
    return code


def run(code: str, names: dict) -> None:
    compiled = compile(code, "<seed 001 example>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    awaited = eval(compiled, names)  # noqa: S307 (the seed's own example text)
    if asyncio.iscoroutine(awaited):
        asyncio.run(awaited)


def test_each_seed_001_example_runs_with_only_its_imports_changed(monkeypatch, capsys):
    examples = seed_examples()
    runnable = [e for e in examples if not any(skip in e for skip in (*NOT_PORTED, EVOLUTION))]
    assert (len(examples), len(runnable)) == (12, 8)
    assert all(
        line.startswith(("from rubricflow.", "import "))
        for e in runnable
        for line in ported(e).splitlines()
        if "import " in line.split("(")[0] and not line.startswith(" ")
    )
    with RunningServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # get_model("openai", ...): the endpoint in use
        monkeypatch.setenv("OPENAI_API_KEY", "sk-offline")  # restored after: the examples set keys
        monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-offline")
        from rubricflow.rubrify import Judge, JudgeConfig, get_model

        # what the seed leaves to the reader: its first snippet (Option 3) uses Judge and a model unimported
        names: dict = {"Judge": Judge, "JudgeConfig": JudgeConfig, "model": get_model("openai", "gpt-4o")}
        names["response_text"] = "The council met on Tuesday."
        for example in runnable:
            if "await judge.evaluate(" in example:  # the seed's judge here is DeepSeek's: the reader's own
                names["judge"] = Judge(JudgeConfig(model=get_model("openai", "gpt-4o")))
            run(ported(example), names)
    printed = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"\d+(\.\d+)?", printed[0]) and 0 <= float(printed[0]) <= 100  # normalized_score, 0-100
    assert printed[1] in (
        "Publish-ready",
        "Strong draft",
        "Workable draft",
        "Needs major revision",
        "Fundamentally unclear",
    )
    assert re.fullmatch(r"  C1: \d \(unit=\d\.\d\d\)", printed[2])
    assert names["result"].ok and names["bundle"].rubric.surface.execution_strategy == "grouped"
    assert names["judgment"].criterion_judgments[0].criterion_id == "C1"
    assert names["constraint"].min_words == 10 and names["constraint"].scope == "criterion"


def test_rf_load_rubric_takes_a_rubric_object():
    import rubricflow as rf
    from rubricflow.rubrify import Criterion, Rubric, RubricMeta

    rubric = Rubric(meta=RubricMeta(name="MyRubric", version="1.0"), goal="g", criteria=[Criterion(id="C1")])
    assert rf.load_rubric(rubric).id == "my-rubric"


def test_a_rubric_that_does_not_compile_is_not_ok_with_its_issue():
    from rubricflow.rubrify import Rubric, RubricMeta, compile_rubric

    result = compile_rubric(Rubric(meta=RubricMeta(name="Empty"), goal="g"))
    assert not result.ok and result.bundle is None and "criteria" in result.issues[0]


@pytest.mark.slow
def test_the_seeds_evolution_examples_run_with_only_their_imports_changed(tmp_path, monkeypatch, capsys):
    """Seed 001's three evolution examples (AnnotatedExample, evolve_rubric, evolve_rubric_v3), extracted
    and run in order; the names they leave to the reader (my_rubric, my_examples, my_role, the models)
    are given here, and DeepSeek's URL points at the offline judge (no internet in a test). ~30 s."""
    import rubricflow.rubrify as rubrify
    from rubricflow.rubrify import AnnotatedExample, Criterion, RoleSpec, Rubric, RubricMeta, get_model

    evolution = [e for e in seed_examples() if EVOLUTION in e]
    assert len(evolution) == 3 and all(
        line.startswith("from rubricflow.") for e in evolution for line in ported(e).splitlines() if "import " in line
    )
    words = ["clear", "vague", "concrete", "muddled"]
    texts = [f"Reply {i}: a {words[i % 4]} answer about item {i}." for i in range(12)]
    names: dict = {
        "my_rubric": Rubric(
            meta=RubricMeta(name="MyRubric", version="1.0"),
            goal="Evaluate clarity.",
            criteria=[Criterion(id="C1", title="Clarity"), Criterion(id="C2", title="Concreteness")],
        ),
        "my_examples": [
            AnnotatedExample(id=f"ex_{i:03}", response_text=t, human_scores={"C1": 1 + 3 * (i % 2 == 0), "C2": 2})
            for i, t in enumerate(texts)
        ],
        "my_role": RoleSpec(persona="a careful editor"),
    }
    with RunningServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-offline")
        monkeypatch.setitem(rubrify.COMPATIBLE, "deepseek", server.base_url)  # the seed's judge, offline
        monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-offline")
        names["judge_model"] = names["reflection_model"] = get_model("openai", "gpt-4o")
        for example in evolution:
            run(ported(example), names)
    assert names["example"].human_scores == {"C1": 4, "C2": 2}
    best_score, iterations = capsys.readouterr().out.split()
    assert 0 <= float(best_score) <= 1 and int(iterations) == 3
    assert names["evolved_role"].persona == "a careful editor" and names["evolved_rubric"].criteria[0].id == "C1"
    result = names["result"]  # the co-evolution's
    assert result.evolved_reflection_templates and isinstance(result.evolved_acceptance_params, dict)
