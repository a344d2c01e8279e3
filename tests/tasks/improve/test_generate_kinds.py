"""`rubric generate --kind`: the seed's generators, composed from its instruction primitives, in the
drafting prompt; a draft is held to its kind's profile (asked again once, then refused), over real HTTP."""

import os
import subprocess

import pytest

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import compile_rubric
from rubricflow.rubrics.formats import load_rubric
from rubricflow.tasks.improve.generate import GenerateError, draft, messages
from rubricflow.tasks.improve.primitives import KINDS, PRIMITIVES, compose
from rubricflow.tasks.judging.config import JudgeConfig
from tests.conftest import EXE
from tests.tasks.improve.test_generate import drafter  # noqa: F401 (a fixture: a server that always drafts one binary criterion)

SOURCE = "# House style\n\n- Every number cites its source in brackets.\n- Sentences stay under thirty words each.\n"


def test_each_kind_composes_its_own_primitives_into_the_drafting_prompt():
    for kind, names in KINDS.items():
        system = messages(SOURCE, "house", kind=kind)[0]["content"]
        assert f"Rubric kind: {kind}." in system
        assert all(PRIMITIVES[n] in system for n in names)
    assert PRIMITIVES["inverted"] in compose("detection") and PRIMITIVES["inverted"] not in compose("scoring")
    assert PRIMITIVES["decision_logic"] in compose("compliance") and "criteria_structure" not in KINDS["constraint"]
    assert "Rubric kind" not in messages(SOURCE, "house")[0]["content"]
    with pytest.raises(InputError, match="unknown rubric kind 'essay'"):
        compose("essay")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_generate_writes_a_rubric_of_the_kind_asked_for(tmp_path, thread_judge_server, kind):
    server = thread_judge_server()
    (tmp_path / "style.md").write_text(SOURCE)
    done = subprocess.run(
        [EXE, "rubric", "generate", "style.md", "--id", "house", "--kind", kind, "--base-url", server.base_url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    bundle, _ = compile_rubric(load_rubric(tmp_path / "house.yaml"))
    assert bundle is not None and bundle.profile == kind and f"profile {kind}" in done.stdout


def test_a_draft_of_another_kind_is_asked_for_again_then_refused(tmp_path, drafter):  # noqa: F811
    source = tmp_path / "house.md"
    source.write_text(SOURCE)
    config = JudgeConfig(base_url=drafter, model="drafter")
    # one binary criterion, no decision rules, no mapping examples: seed 000's ComplianceProfile does not
    # hold (it was reported a compliance rubric by the fallback that names the nearest profile)
    with pytest.raises(
        GenerateError,
        match=r"did not compile as a compliance rubric.*no rubric of the seed's profiles \(nearest: compliance\)",
    ):
        draft(config, source, "house", kind="compliance")
    with pytest.raises(GenerateError, match="did not compile as a scoring rubric.*not a scoring rubric"):
        draft(config, source, "house", kind="scoring")


def test_the_offline_drafts_meet_the_seeds_own_profile_of_each_kind():
    """A compliance draft counts mapping examples (seed 000: P_examples >= 2), a constraint draft has
    one ICL example and no criteria: each kind's draft holds the seed's definition itself."""
    from rubricflow.rubrics.documents import rubric_from_data
    from rubricflow.rubrics.properties import seed_profile
    from rubricflow.tasks.standins.offline_judge import draft_rubric

    for kind in sorted(KINDS):
        asked = f"Use metadata.id 'house'\nRubric kind: {kind}.\n<<<BEGIN SOURCE x>>>\n{SOURCE}\n<<<END SOURCE x>>>"
        rubric = rubric_from_data(draft_rubric(asked), kind)
        assert seed_profile(rubric) == kind, kind
        if kind in ("compliance", "constraint"):
            assert rubric.mapping_examples and not rubric.goldens
