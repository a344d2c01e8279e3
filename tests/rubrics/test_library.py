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


def test_builtin_goldens_are_consistent_with_their_own_scoring():
    """A golden scored perfectly passes and one scored at the floor fails: thresholds are reachable."""
    for e in Library([BUILTIN]).entries():
        r = e.rubric
        top = {c.id: c.scale.domain()[-1] if c.scale.kind != "numeric" else c.scale.max for c in r.criteria}
        low = {c.id: c.scale.domain()[0] if c.scale.kind != "numeric" else c.scale.min for c in r.criteria}
        top = {k: (1 if r.criterion(k).scale.kind == "binary" else v) for k, v in top.items()}
        assert verdict(r, top).passed is True, e.id
        assert verdict(r, low).passed is False, e.id


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
