import shutil

import pytest

from rubricflow.rubrics.compiler import compile_rubric
from rubricflow.rubrics.library import BUILTIN, Library, LibraryError, resolve
from rubricflow.rubrics.scoring import verdict

REQUIRED = {
    "writing-quality",
    "llm-slop",
    "request-compliance",
    "completeness",
    "groundedness",
    "helpfulness",
    "instruction-following",
    "user-story-quality",
    "refusal-correctness",  # waza's built-ins (seed 004)
    "tool-use-appropriateness",
}


def test_builtin_library_compiles_cleanly_with_goldens():
    lib = Library([BUILTIN])
    assert {e.id for e in lib.entries()} >= REQUIRED
    for e in lib.entries():
        bundle, issues = compile_rubric(e.rubric)
        assert bundle is not None, [str(i) for i in issues]
        assert not [i for i in issues if i.severity == "error"]
        assert len(e.rubric.goldens) >= 2
        assert {g.expected for g in e.rubric.goldens} == {"pass", "fail"}


def _ends(scale) -> tuple:
    """A scale's (floor, top) values: a nominal scale's are its lowest- and highest-scored categories
    (its order is no ranking: a verdict space lists Yes, Somewhat, No)."""
    if scale.kind == "numeric":
        return scale.min, scale.max
    if scale.kind == "nominal":
        ranked = sorted(scale.categories, key=lambda c: c.score)
        return ranked[0].value, ranked[-1].value
    if scale.kind == "binary":
        return 0, 1
    return scale.domain()[0], scale.domain()[-1]


def test_builtin_goldens_are_consistent_with_their_own_scoring():
    """A golden scored perfectly passes and one scored at the floor fails: thresholds are reachable."""
    for e in Library([BUILTIN]).entries():
        r = e.rubric
        low = {c.id: _ends(c.scale)[0] for c in r.criteria}
        top = {c.id: _ends(c.scale)[1] for c in r.criteria}
        assert verdict(r, top).passed is True, e.id
        assert verdict(r, low).passed is False, e.id


def _same_anchor(xml, library, cid: str, value: int) -> int:
    """The library's level of the anchor the XML judge words for `value` (C2 runs the other way)."""
    said = next(a.description for a in xml.criterion(cid).scale.anchors if a.value == value)
    return next(a.value for a in library.criterion(cid).scale.anchors if a.description == said)


def test_the_library_compliance_judge_asks_its_verdict_as_the_xml_import_does():
    """Seed 000's P_decision ("decision logic instead of arithmetic scoring"): the YAML ComplianceJudge
    asks the verdict R1-R4 give, as the imported XML one does, and reads each rule as the same anchors.
    Expected verdicts from the rules: C1, C2, C3 = 1, 2, 2 (incomplete, no refusal) No by R4, where
    `method: min` said Somewhat; 2, 2, 1 Yes by R2, where it said Somewhat. Before, the library rubric
    had no verdict criterion and decision_logic.compiled() gave None."""
    from rubricflow.rubrics.decision_logic import compiled, decide
    from rubricflow.rubrics.formats import load_rubric
    from tests.conftest import TEST_DATA

    xml = load_rubric(TEST_DATA / "rubrics/xml/compliance-judge-layout.xml")
    library = resolve("compliance-judge")
    for r in (xml, library):
        asked = r.criterion("Judgement")
        assert [(c.value, c.score) for c in asked.scale.categories] == [("Yes", 1.0), ("Somewhat", 0.5), ("No", 0.0)]
        assert asked.tags == ("verdict",) and asked.weight == 1.0
        assert [c.weight for c in r.criteria if c.id != "Judgement"] == [0.0, 0.0, 0.0]
        assert [(b.label, b.min) for b in r.scoring.labels] == [("Yes", 1.0), ("Somewhat", 0.5), ("No", 0.0)]
        assert (r.scoring.method, r.scoring.disqualified_label) == ("weighted_mean", "No")
    ours = compiled(library)
    assert ours is not None
    theirs = [
        (rule.id, rule.verdict, {(c, _same_anchor(xml, library, c, v)) for c, v in rule.when})
        for rule in compiled(xml)[1]
    ]
    assert [(rule.id, rule.verdict, set(rule.when)) for rule in ours[1]] == theirs
    assert decide(library, {"C1": 1, "C2": 2, "C3": 2})[1].verdict == "No"  # R4
    assert decide(library, {"C1": 2, "C2": 2, "C3": 1})[1].verdict == "Yes"  # R2
    assert decide(library, {"C1": 2, "C2": 1, "C3": 2})[1].verdict == "Somewhat"  # R3


def test_only_a_document_with_rules_and_scored_verdicts_is_judged_by_its_verdict():
    """The transformation is the XML import's, once: a loaded rubric written back loads to the same
    rubric, and a rubric whose rules are prose or whose verdicts carry no score is left as written."""
    from rubricflow.rubrics.compiler import content_hash
    from rubricflow.rubrics.documents import rubric_from_data, rubric_to_data

    library = resolve("compliance-judge")
    again = rubric_from_data(rubric_to_data(library), "again")
    assert content_hash(again) == content_hash(library) and len(again.criteria) == 4
    prose = resolve("request-compliance")  # decision_rules as prose, no verdicts
    assert not any("verdict" in c.tags for c in prose.criteria)
    data = rubric_to_data(library)
    data["criteria"] = [c for c in data["criteria"] if c["id"] != "Judgement"]
    data["verdicts"] = [{"label": v["label"]} for v in data["verdicts"]]
    unscored = rubric_from_data(data, "unscored")
    assert [c.id for c in unscored.criteria] == ["C1", "C2", "C3"]


def test_every_way_to_make_a_rubric_with_rules_and_scored_verdicts_judges_it_by_its_verdict():
    """The verdict is asked where a Rubric is made, not only where a file is read: a rubric built in
    Python (the rubrify port, algebra's project) and its saved file were two rubrics (another hash,
    another score); a document of rules and verdicts alone, or one that asked for `invert`, broke."""
    from rubricflow.rubrics import algebra
    from rubricflow.rubrics.compiler import content_hash
    from rubricflow.rubrics.documents import rubric_from_data, rubric_to_data
    from rubricflow.rubrics.model import Rubric
    from rubricflow.rubrics.scoring import verdict

    data = rubric_to_data(resolve("compliance-judge"))
    data["criteria"] = [c for c in data["criteria"] if c["id"] != "Judgement"]
    built = Rubric.model_validate(data)
    assert content_hash(built) == content_hash(rubric_from_data(data, "file"))
    projected = algebra.project(resolve("compliance-judge"), ["C1", "C2"])
    assert content_hash(rubric_from_data(rubric_to_data(projected), "saved")) == content_hash(projected)
    rules = {k: data[k] for k in ("decision_rules", "verdicts", "output")}
    bare = Rubric.model_validate({"metadata": {"id": "bare"}, **rules})
    assert [c.id for c in bare.criteria] == ["Judgement"]
    inverted = Rubric.model_validate({**data, "scoring": {"invert": True, "method": "min"}})
    assert (verdict(inverted, {"Judgement": "Yes"}).score, verdict(inverted, {"Judgement": "Yes"}).label) == (
        1.0,
        "Yes",
    )


def test_lookup_by_name_version_path_type_and_tag(tmp_path):
    src = BUILTIN / "helpfulness.yaml"
    newer = tmp_path / "helpfulness-2.yaml"
    newer.write_text(src.read_text().replace("version: 1.0.0", "version: 2.0.0"))
    lib = Library([BUILTIN, tmp_path])
    assert lib.get("helpfulness").version == "2.0.0"
    assert lib.get("helpfulness@1.0.0").path == src
    assert lib.get(str(newer)).version == "2.0.0"
    assert {e.id for e in lib.find(artifact_type="user-story")} == {"user-story-quality"}
    assert {e.id for e in lib.find(tags=("rag",))} == {"groundedness"}
    assert {e.id for e in lib.find("slop")} == {"llm-slop", "anti-llmy"}
    with pytest.raises(LibraryError, match="no rubric named 'helpfullness'"):
        lib.get("helpfullness")


def test_a_forge_rubric_is_found_by_the_id_its_file_writes():
    """Seed 002: "Always reference by ID", its ids written `user_story_quality_v1`; the library keys
    them kebab-cased (user-story-quality-v1), and the id as written found nothing."""
    import rubricflow as rf

    lib = Library()
    for written in ("user_story_quality_v1", "test_plan_quality_v1", "prd_quality_v1"):
        entry = lib.get(written)
        assert entry.rubric.metadata.provenance["rubric_id"] == written
        assert entry.id == written.replace("_", "-")
        assert lib.get(f"{written}@1.0.0") is entry
    assert rf.load_rubric("user_story_quality_v1").id == "user-story-quality-v1"
    with pytest.raises(LibraryError, match="no rubric named 'user_story_quality_v9'"):
        lib.get("user_story_quality_v9")


def test_duplicate_ids_are_refused(tmp_path):
    shutil.copy(BUILTIN / "groundedness.yaml", tmp_path / "copy.yaml")
    with pytest.raises(LibraryError, match="duplicate rubric groundedness v1.0.0: .*groundedness.yaml and .*copy.yaml"):
        Library([BUILTIN, tmp_path])


def test_resolve_prefers_files_then_names(tmp_path):
    assert resolve("llm-slop").metadata.id == "llm-slop"
    assert resolve(str(BUILTIN / "completeness.yaml")).metadata.id == "completeness"
    with pytest.raises(Exception, match="missing.yaml: no such file"):
        resolve(str(tmp_path / "missing.yaml"))


@pytest.mark.parametrize(
    "text, hits",
    [("Certainly! I can help with that.", True), ("I hope this helps.", True), ("He spoke uncertainly!", False)],
)
def test_a_pattern_ending_in_punctuation_matches_in_the_warehouse(text, hits):
    """`\\bcertainly!\\b` never matched "Certainly! I": no word boundary follows the "!". Both the
    library's regex and word lists bound only the sides that are word characters (DuckDB's RE2 decides)."""
    import duckdb

    from rubricflow.rubrics.model import Pattern

    chatty = next(p for p in resolve("llm-slop").patterns if p.id == "chatty_meta")
    words = Pattern(id="w", words=("certainly!", "i hope this helps"), flags="i")
    for pattern in (chatty, words):
        found = duckdb.connect().execute("SELECT regexp_matches(?, ?)", [text, pattern.effective_regex()]).fetchone()
        assert found == (hits,), (pattern.id, text)
