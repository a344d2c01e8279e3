"""Seed 001's Python examples port to rubricflow by changing only their import lines
(`rubricflow.rubrify`): each is extracted from the seed's text and run, in order, in one session, as a
reader pasting them would, against the offline judge on 127.0.0.1."""

from __future__ import annotations

import ast
import asyncio
import re
import time

import pytest

from rubricflow.errors import InputError
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


# ---------------------------------------------------------------- rubrify's defaults and names (seed 001)


def rubrify_rubric(**fields):
    from rubricflow.rubrify import Criterion, Rubric, RubricMeta

    criteria = fields.pop("criteria", None) or [Criterion(id=f"C{i}", title=f"Criterion {i}") for i in (1, 2, 3)]
    return Rubric(meta=RubricMeta(name="PortCheck"), goal="Judge the reply.", criteria=criteria, **fields)


def bundle_of(rubric, **options):
    from rubricflow.rubrify import compile_rubric

    result = compile_rubric(rubric, **options)
    assert result.ok, result.issues
    return result.bundle


@pytest.fixture
def offline(monkeypatch):
    """A rubrify Judge on the offline judge (get_model("openai", ...) reads OPENAI_BASE_URL)."""
    from rubricflow.rubrify import Judge, JudgeConfig, get_model

    def judge(config=None, **server):
        from rubricflow.tasks.standins.judge_server import ServerConfig

        running = RunningServer(ServerConfig(**server)).__enter__()
        started.append(running)
        monkeypatch.setenv("OPENAI_BASE_URL", running.base_url)
        return Judge(JudgeConfig(model=get_model("openai", "gpt-4o"), **(config or {})))

    started: list = []
    monkeypatch.setenv("OPENAI_API_KEY", "sk-offline")
    yield judge
    for running in started:
        running.__exit__(None, None, None)


def test_a_disqualified_judgment_is_rejected(offline):
    """Seed 001, judge loop step 10: "Disqualifier violations produce 'Rejected'" (was 'disqualified')."""
    from rubricflow.rubrics.scoring import verdict
    from rubricflow.rubrify import Disqualifier

    rubric = rubrify_rubric(disqualifiers=[Disqualifier(id="DQ1", kind="criterion", criterion="C1")])
    assert verdict(bundle_of(rubric).rubric, {"C1": 0, "C2": 1, "C3": 1}).label == "Rejected"
    self_disclosure = Disqualifier(id="DQ_AI", description="AI self-disclosure", pattern=r"as an ai")
    judgment = asyncio.run(
        offline().evaluate(bundle_of(rubrify_rubric(disqualifiers=[self_disclosure])), "As an AI, I agree.")
    )
    assert (judgment.decision, judgment.violations, judgment.aggregation.normalized_score) == (
        "Rejected",
        ("DQ_AI",),
        0,
    )


def test_a_pattern_disqualifier_is_scanned_against_the_judges_rationales_too(offline):
    """Seed 001: a pattern disqualifier is "regex scanned first against judge rationales, then against
    the response text". The offline judge's rationales say "offline stand-in judge"; the text does not."""
    from rubricflow.rubrify import Disqualifier

    assert "regex scanned first against judge rationales, then against the response text" in SEED
    in_rationale = Disqualifier(id="DQ_R", description="judge chatter", pattern=r"stand-in judge")
    in_text = Disqualifier(id="DQ_T", description="AI self-disclosure", pattern=r"as an ai")
    nowhere = Disqualifier(id="DQ_N", description="never said", pattern=r"zebra crossing")
    judge, text = offline(), "The council met on Monday and voted to repair the bridge."
    assert "stand-in judge" not in text.lower()
    judged = asyncio.run(judge.evaluate(bundle_of(rubrify_rubric(disqualifiers=[nowhere, in_rationale])), text))
    assert any("stand-in judge" in c.rationale for c in judged.criterion_judgments)
    assert (judged.decision, judged.violations, judged.aggregation.normalized_score) == ("Rejected", ("DQ_R",), 0)
    assert (judged.result.passed, judged.result.score) == (False, 0.0)
    both = rubrify_rubric(disqualifiers=[in_text, in_rationale])
    judged = asyncio.run(judge.evaluate(bundle_of(both), "As an AI, " + text))
    assert judged.violations == ("DQ_R", "DQ_T")  # the rationales are scanned first
    clean = asyncio.run(judge.evaluate(bundle_of(rubrify_rubric(disqualifiers=[nowhere])), text))
    assert clean.violations == () and clean.decision != "Rejected"


def test_the_default_execution_strategy_is_per_criterion(offline):
    """Seed 001: `execution_strategy` -- "`per_criterion` (default)": one call per criterion (was one holistic call)."""
    from rubricflow.rubrify import SurfacePolicy

    assert SurfacePolicy().execution_strategy == "per_criterion"
    bundle = bundle_of(rubrify_rubric())
    assert bundle.rubric.surface.execution_strategy == "per_criterion"
    judgment = asyncio.run(offline().evaluate(bundle, "The council met on Tuesday."))
    assert judgment.result.usage.calls == 3  # three criteria, three calls


def test_the_input_codec_is_xml_by_default():
    """Seed 001: `input_codec` -- currently only "xml": the rubric as an `<LLM_JUDGE_SPEC>` document (was markdown)."""
    from rubricflow.rubrics.render import render
    from rubricflow.rubrify import SurfacePolicy

    assert SurfacePolicy().input_codec == "xml"
    for bundle in (bundle_of(rubrify_rubric()), bundle_of(rubrify_rubric(), policy=SurfacePolicy())):
        assert bundle.rubric.surface.input_codec == "xml"
        assert "<LLM_JUDGE_SPEC" in render(bundle.rubric, "per_criterion").of_genre(None)[0].system


def test_decision_thresholds_on_the_0_100_score_become_the_decision_labels():
    """Seed 001: `decision_thresholds` -- (min_score, label) tuples for custom labels (SurfacePolicy raised);
    rubrify gives a score below every threshold the lowest label."""
    from rubricflow.rubrics.scoring import verdict
    from rubricflow.rubrify import SurfacePolicy

    policy = SurfacePolicy(decision_thresholds=[(80, "Yes"), (50, "Somewhat")], execution_strategy="holistic")
    rubric = bundle_of(rubrify_rubric(), policy=policy).rubric
    assert [(d.label, d.min) for d in rubric.scoring.labels] == [("Yes", 0.8), ("Somewhat", 0.0)]
    assert rubric.surface.execution_strategy == "holistic"
    assert verdict(rubric, {"C1": 1, "C2": 1, "C3": 1}).label == "Yes"
    assert verdict(rubric, {"C1": 1, "C2": 0, "C3": 0}).label == "Somewhat"  # 33, below 50: the lowest
    assert verdict(bundle_of(rubrify_rubric(surface=policy)).rubric, {"C1": 1, "C2": 1, "C3": 0}).label == "Somewhat"


def test_use_tool_is_true_by_default_and_a_refused_tool_call_falls_back(offline):
    """Seed 001: "Tool-based (default, `use_tool=True`)"; `use_tool=False` is the text-based strategy.
    An endpoint that refuses tools still gets a judgment (rubricflow's output-mode negotiation)."""
    from rubricflow.rubrify import JudgeConfig, get_model

    config = JudgeConfig(model=get_model("openai", "gpt-4o"))
    assert config.use_tool is True and config.options()["output_mode"] == "tools"
    assert JudgeConfig(model=get_model("openai", "gpt-4o"), use_tool=False).options()["output_mode"] == "text"
    assert JudgeConfig(model=get_model("gemini", "gemini-2.5-flash")).options()["output_mode"] == "auto"  # no tools
    judge = offline(supports="text")  # refuses response_format and tools
    judgment = asyncio.run(judge.evaluate(bundle_of(rubrify_rubric()), "The council met on Tuesday."))
    assert judgment.aggregation.score is not None and judge.engine.config.output_mode == "auto"


def test_seed_named_criterion_and_binary_scale_fields():
    """Seed 001: "criteria with `genre=None` are always active"; BinaryScale "`True -> true_score`,
    `False -> false_score`" (each was refused)."""
    from rubricflow.rubrify import BinaryScale, Criterion

    always, travel = Criterion(id="C1", genre=None), Criterion(id="C2", genre="travel")
    rubric = rubrify_rubric(criteria=[always, travel])
    assert [c.id for c in rubric.active_criteria(None)] == ["C1"]
    assert [c.id for c in rubric.active_criteria("travel")] == ["C1", "C2"]
    scale = BinaryScale(true_label="yes", false_label="no", true_score=0.8, false_score=0.2)
    assert (scale.unit(True), scale.unit(False), scale.labels) == (0.8, 0.2, ("no", "yes"))
    with pytest.raises(InputError, match=r"BinaryScale: a score is a unit score in \[0, 1\] in rubricflow, got 2"):
        BinaryScale(true_score=2)


def test_seed_named_constraints_evidence_and_calibration_examples():
    """Seed 001's OutputConstraint variants, EvidenceSpec and CalibrationExample (none was exported):
    each maps to rubricflow's own, or is refused in one line where rubricflow has no equivalent."""
    from rubricflow.rubrics.constraints import check_constraint
    from rubricflow.rubrify import (
        CalibrationExample,
        CharLimitConstraint,
        EvidenceSpec,
        ItemCountConstraint,
        PrefixSuffixConstraint,
        TokenConstraint,
    )

    prefix = PrefixSuffixConstraint(id="because", prefix="BECAUSE:", target_field="rationale")
    assert prefix.severity == "hard" and check_constraint(prefix, "So it is.") == "does not start with 'BECAUSE:'"
    assert check_constraint(CharLimitConstraint(id="short", limit=5), "too long") == "8 chars > 5"
    items = ItemCountConstraint(id="three", count=3, delimiter=";")
    assert (items.min_items, items.max_items, check_constraint(items, "a; b")) == (3, 3, "2 items < 3")
    assert check_constraint(TokenConstraint(id="no_sorry", token="sorry", must_contain=False), "I'm sorry") is not None
    # TokenConstraint(must_contain=True) and CharLimitConstraint(mode="min") were refused here: they now
    # map (test_token_must_contain_and_char_limit_min_or_exactly_map_and_are_checked below)
    assert EvidenceSpec(required=True, min_items=1).min_items == 1
    with pytest.raises(InputError, match="checks quotes against the response only"):
        EvidenceSpec(source="context")
    example = CalibrationExample(
        id="ex1", input_summary="A direct answer.", expected_verdict="Yes", explanation="no hedging"
    )
    rubric = bundle_of(rubrify_rubric(calibration_examples=[example])).rubric
    assert rubric.mapping_examples[0].model_dump() == {
        "id": "ex1", "input": "", "output": "A direct answer.", "verdict": "Yes", "note": "no hedging"
    }  # fmt: skip


def test_an_evidence_spec_is_prompt_only_in_the_port_and_enforced_in_rubricflows_own(offline):
    """Seed 001: EvidenceSpec's `required`, `min_items` ... "are not enforced post-hoc by the engine".
    The offline judge quotes one sentence; two are required. Under the port's SurfacePolicy the
    criterion is scored; the same rubric with rubricflow's default surface leaves it unscored."""
    from rubricflow.rubrics.model import Surface
    from rubricflow.rubrify import Criterion, EvidenceSpec

    assert "are prompt-only -- they are rendered into the XML surface" in SEED
    assert "but are not enforced post-hoc by the engine" in SEED
    cited = Criterion(id="C1", title="Cited", evidence=EvidenceSpec(required=True, min_items=2))
    rubric = rubrify_rubric(criteria=[cited, Criterion(id="C2", title="Other")])
    assert rubric.surface.enforce_evidence is False
    judge, text = offline(), "The council met on Monday. It voted to repair the bridge."
    judged = asyncio.run(judge.evaluate(bundle_of(rubric), text))
    first = judged.result.criteria["C1"]
    assert (first.status, len(first.evidence)) == ("scored", 1) and first.score is not None
    strict = rubric.model_copy(
        update={"surface": Surface.model_validate({**rubric.surface.model_dump(), "enforce_evidence": True})}
    )
    enforced = asyncio.run(judge.evaluate(bundle_of(strict), text)).result.criteria["C1"]
    assert (enforced.status, enforced.reason, enforced.score) == ("unscored", "required evidence missing", None)


def test_seed_disqualifier_and_pattern_fields():
    """rubrify's `Disqualifier(pattern=)` / `(criterion_ids=)` and `PatternEntry(pattern=)` (each was refused)."""
    from rubricflow.rubrics.scoring import verdict
    from rubricflow.rubrify import Disqualifier, PatternEntry

    assert PatternEntry(id="p", pattern="as an ai").effective_regex() == "(?i)as an ai"
    rubric = bundle_of(
        rubrify_rubric(
            disqualifiers=[Disqualifier(id="DQ1", pattern="as an ai"), Disqualifier(id="DQ2", criterion_ids=["C1"])]
        )
    ).rubric
    assert [p.id for p in rubric.patterns] == ["dq_DQ1"]
    assert verdict(rubric, {"C1": 1, "C2": 1, "C3": 1}, matched_patterns={"dq_DQ1"}).disqualified == ("DQ1",)
    assert verdict(rubric, {"C1": 0, "C2": 1, "C3": 1}).disqualified == ("DQ2",)
    with pytest.raises(InputError, match="give one Disqualifier per pattern or criterion"):
        Disqualifier(id="DQ3", criterion_ids=["C1", "C2"])


def test_a_weighted_sum_group_is_normalized_by_its_weight():
    """rubrify's judge loop divides a `weighted_sum` group by its children's total weight, so the
    normalized score stays 0-100 (was a plain sum: 150 for three passing criteria)."""
    from rubricflow.rubrics.scoring import verdict
    from rubricflow.rubrify import CriterionGroup

    group = CriterionGroup(id="G1", title="Style", aggregation="weighted_sum", children=["C1", "C2"])
    rubric = bundle_of(rubrify_rubric(groups=[group])).rubric
    assert verdict(rubric, {"C1": 1, "C2": 1, "C3": 0}).score == 0.5
    assert verdict(rubric, {"C1": 1, "C2": 1, "C3": 1}).score == 1.0
    assert CriterionGroup(id="G2", children=["C1"]).aggregation == "weighted_mean"  # rubrify's default weighted_sum


def test_a_judgment_carries_rubrifys_usage_aggregation_and_pattern_fields(offline):
    """Seed 001's Judgment (constraint_warnings, pattern_hits, usage, timestamp), AggregatedScore
    (raw_score, method, group_scores), CriterionJudgment (confidence, warnings) and JudgeUsage, each
    from rubricflow's own result; Judge.total_usage adds them up."""
    from rubricflow.rubrify import CriterionGroup, JudgeUsage, PatternEntry

    rubric = rubrify_rubric(
        groups=[CriterionGroup(id="G1", title="Style", children=["C1", "C2"])],
        patterns=[PatternEntry(id="council", pattern=r"counc\w+")],
    )
    judge, before = offline(), time.time() * 1000
    judgment = asyncio.run(judge.evaluate(bundle_of(rubric), "The Council met. The council voted."))
    used = judgment.result.usage
    assert judgment.usage == JudgeUsage(used.prompt_tokens, used.completion_tokens, used.total_tokens, used.calls)
    assert judgment.usage.api_calls == 3 and judgment.usage.input_tokens > 0
    assert judgment.pattern_hits == {"council": ["Council", "council"]}
    assert before <= judgment.timestamp <= time.time() * 1000
    aggregation, units = judgment.aggregation, [c.unit_score for c in judgment.criterion_judgments]
    assert aggregation.method == "grouped_weighted_mean" and set(aggregation.group_scores) == {"G1"}
    assert aggregation.raw_score == pytest.approx((units[0] + units[1]) / 2 + units[2])
    assert isinstance(judgment.constraint_warnings, tuple)
    assert all(isinstance(c.warnings, tuple) and c.confidence is None for c in judgment.criterion_judgments)
    asyncio.run(judge.evaluate(bundle_of(rubric), "Another reply."))
    assert judge.total_usage.api_calls == 6 and judge.evaluation_count == 2


# ---------------------------------------------------------------- seed 001 audit: names that were refused or dropped


def test_a_nominal_scale_of_anchors_scores_each_category_by_its_value_range():
    """Seed 001's scale table: NominalScale "Unordered categories with anchors | Maps category value to
    [0, 1] by range" (`NominalScale(anchors=...)` was refused: rubricflow's takes `categories=` only)."""
    from rubricflow.rubrics.scoring import verdict
    from rubricflow.rubrify import Criterion, NominalScale, ScaleAnchor

    assert (
        '| `NominalScale` | `"nominal"` | Unordered categories with anchors | Maps category value to `[0, 1]` by range |'
        in SEED
    )
    anchors = [
        ScaleAnchor(value=0, label="red"),
        ScaleAnchor(value=1, label="green"),
        ScaleAnchor(value=2, label="blue"),
    ]
    scale = NominalScale(anchors=anchors)
    assert [(c.value, c.score) for c in scale.categories] == [("red", 0.0), ("green", 0.5), ("blue", 1.0)]
    assert NominalScale(categories=anchors) == scale  # rubrify's own source spells them `categories=`
    assert NominalScale(categories=[{"value": "A", "score": 1.0}, {"value": "B"}]).domain() == ["A", "B"]
    rubric = bundle_of(rubrify_rubric(criteria=[Criterion(id="C1", title="Colour", scale=scale)])).rubric
    assert verdict(rubric, {"C1": "green"}).score == 0.5


def test_rubric_construction_refuses_duplicate_ids_and_unknown_references():
    """Seed 001: "Model validators enforce unique criterion IDs and valid group/disqualifier references
    at construction time" (each was built, and failed only at compile_rubric)."""
    from rubricflow.rubrify import Criterion, CriterionGroup, Disqualifier

    assert (
        "Model validators enforce unique criterion IDs and valid group/disqualifier references at construction time"
        in SEED
    )
    one = [Criterion(id="C1", title="a")]
    cases = {
        "criteria/groups[1].id: id 'C1' is used twice": {"criteria": [*one, Criterion(id="C1", title="b")]},
        "groups[0].children: group 'G' names unknown node 'C9'": {
            "criteria": one,
            "groups": [CriterionGroup(id="G", children=["C9"])],
        },
        "disqualifiers[0].criterion: D names unknown criterion 'C9'": {
            "criteria": one,
            "disqualifiers": [Disqualifier(id="D", criterion_ids=["C9"])],
        },
    }
    for said, fields in cases.items():
        with pytest.raises(InputError) as refused:
            rubrify_rubric(**fields)
        assert str(refused.value) == f"Rubric 'port-check': {said}"  # one line: the rubric and the field


def test_an_output_constraint_on_a_field_rubrify_does_not_recognise_is_an_issue():
    """Seed 001: `audit_output_constraints` -- "recognized fields, duplicate IDs, hard-enforcement
    safety"; its tests cover the "audit pass for duplicate IDs and unknown target fields" (an unknown
    field compiled ok, asked of the judge as a new answer field)."""
    from rubricflow.rubrify import WordCountConstraint, compile_rubric

    assert "`audit_output_constraints` -- recognized fields, duplicate IDs, hard-enforcement safety" in SEED
    assert "audit pass for duplicate IDs and unknown target fields" in SEED
    rubric = rubrify_rubric()
    unknown = compile_rubric(
        rubric, output_constraints=[WordCountConstraint(id="w", count=10, target_field="nonsense")]
    )
    assert not unknown.ok and len(unknown.issues) == 1
    assert "E_UNKNOWN_FIELD at output.constraints[0].field" in unknown.issues[0] and "'nonsense'" in unknown.issues[0]
    for field in ("rationale", "evidence", "score", "advice"):  # rubrify's audit_output_constraints recognizes these
        assert compile_rubric(rubric, output_constraints=[WordCountConstraint(id="w", count=10, target_field=field)]).ok


def test_token_must_contain_and_char_limit_min_or_exactly_map_and_are_checked(offline):
    """Seed 001: the OutputConstraint union "PrefixSuffixConstraint | WordCountConstraint |
    CharLimitConstraint | ItemCountConstraint | TokenConstraint", "each with a concrete `check(value)`";
    TokenConstraint's own default (must_contain=True) and CharLimitConstraint(mode="min"/"exactly") were
    refused. The offline judge's rationales say "offline stand-in judge": a hard required token it does
    not write (the case counts, as in rubrify's check) rejects the judgment."""
    from rubricflow.rubrics.constraints import check_constraint
    from rubricflow.rubrify import CharLimitConstraint, TokenConstraint

    assert (
        "PrefixSuffixConstraint | WordCountConstraint | CharLimitConstraint | ItemCountConstraint | TokenConstraint"
        in SEED
    )
    assert "each with a concrete `check(value) -> str | None` method" in SEED
    token = TokenConstraint(id="t", token="BECAUSE", target_field="rationale", description="d")
    assert (token.require, token.forbid, token.severity) == (("BECAUSE",), (), "hard")
    assert check_constraint(token, "because it is") == "does not contain 'BECAUSE'"
    assert check_constraint(token, "BECAUSE: it is") is None
    at_least = CharLimitConstraint(id="c", limit=10, mode="min")
    assert (at_least.min_chars, at_least.max_chars, check_constraint(at_least, "too short")) == (
        10,
        None,
        "9 chars < 10",
    )
    exactly = CharLimitConstraint(id="c", limit=3, mode="exactly")
    assert (check_constraint(exactly, "abc"), check_constraint(exactly, "abcd")) == (None, "4 chars > 3")
    judge, text = offline(), "The council met on Tuesday."
    for said, rejected in (("stand-in judge", ()), ("STAND-IN JUDGE", ("mark",))):
        bundle = bundle_of(rubrify_rubric(), output_constraints=[TokenConstraint(id="mark", token=said)])
        judged = asyncio.run(judge.evaluate(bundle, text))
        assert (judged.violations, judged.decision == "Rejected") == (rejected, bool(rejected))


def test_surface_policy_and_word_count_defaults_are_rubrifys():
    """Seed 001: `criterion_focus` -- "`full` (send entire rubric per criterion) or `focused`", the
    focused document "used when `criterion_focus == "focused"`"; rubrify's SurfacePolicy defaults to
    "full" and enforce_key_order=True, its WordCountConstraint to mode="exactly", enforcement="hard"
    (the port had "focused", False, "max", "soft")."""
    from rubricflow.rubrics.render import render
    from rubricflow.rubrify import SurfacePolicy, WordCountConstraint

    assert '`criterion_focus` -- `"full"` (send entire rubric per criterion)' in SEED
    assert 'used when `criterion_focus == "focused"`' in SEED
    assert (SurfacePolicy().criterion_focus, SurfacePolicy().enforce_key_order) == ("full", True)
    rubric = bundle_of(rubrify_rubric()).rubric
    assert (rubric.surface.criterion_focus, rubric.surface.enforce_key_order) == ("full", True)
    first = render(rubric, "per_criterion").unit("C1").system
    assert all(f'criterion id="{cid}"' in first for cid in ("C1", "C2", "C3"))  # the whole rubric, C1 scored
    assert "Write the keys in exactly this order" in first
    words = WordCountConstraint(id="w", count=35)
    assert (words.min_words, words.max_words, words.severity) == (35, 35, "hard")
