"""Bad input gets an error naming the file, row or field, a non-zero exit, and harms nothing landed."""

import json
import os
import subprocess

import duckdb
import pytest

from tests.conftest import EXE, SHARED_RUBRICS


def run(*args, cwd):
    return subprocess.run(
        [EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=300, env={**os.environ, "COLUMNS": "200"}
    )


def said(result) -> str:
    return " ".join((result.stdout + result.stderr).split())


@pytest.fixture(scope="module")
def landed(tmp_path_factory):
    """A warehouse with a corpus in it, to check bad input harms nothing."""
    cwd = tmp_path_factory.mktemp("bad")
    (cwd / "good.jsonl").write_text(
        "".join(json.dumps({"id": f"g{i}", "text": f"good text {i}"}) + "\n" for i in range(5))
    )
    assert run("ingest", "good.jsonl", "-c", "good", "-w", "w.duckdb", cwd=cwd).returncode == 0
    return cwd


def texts(cwd):
    con = duckdb.connect(str(cwd / "w.duckdb"), read_only=True)
    try:
        return con.execute("SELECT corpus_id, count(*) FROM texts GROUP BY 1 ORDER BY 1").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    "name, content, code, message",
    [
        ("empty.jsonl", b"", 2, "empty.jsonl: empty corpus"),
        ("utf16.jsonl", '{"id": "a", "text": "hi"}\n'.encode("utf-16"), 1, "utf16.jsonl: row 1: invalid UTF-8"),
        (
            "huge.jsonl",
            json.dumps({"id": "h", "text": "x" * 2_000_000}).encode() + b"\n",
            1,
            "huge.jsonl: row 1: text over the size cap",
        ),
        ("nocol.jsonl", b'{"id": "a", "body": "x"}\n', 2, "nocol.jsonl: row 1 has no text column"),
        (
            "dupes.jsonl",
            b'{"id": "a", "text": "one"}\n{"id": "a", "text": "two"}\n',
            1,
            "dupes.jsonl: row 2: duplicate text_id with different text",
        ),
        ("nested.jsonl", b'{"id": "n", "text": {"inner": "json"}}\n', 1, "nested.jsonl: row 1: text is an object"),
        ("missing.jsonl", None, 2, "missing.jsonl: no such file"),
    ],
)
def test_bad_corpora(landed, name, content, code, message):
    if content is not None:
        (landed / name).write_bytes(content)
    result = run("ingest", name, "-c", name.split(".")[0], "-w", "w.duckdb", cwd=landed)
    assert result.returncode == code and message in said(result), said(result)
    assert ("good", 5) in texts(landed)


def test_csv_with_embedded_newlines_is_read_not_refused(landed):
    (landed / "multi.csv").write_text('id,text\n1,"first line\nsecond line"\n', encoding="utf-8")
    result = run("ingest", "multi.csv", "-c", "multi", "-w", "w.duckdb", cwd=landed)
    assert result.returncode == 0 and ("multi", 1) in texts(landed)


@pytest.mark.parametrize(
    "name, content, message",
    [
        (
            "unclosed.yaml",
            "metadata: {id: x}\ngoal: g\npatterns: [{id: un, regex: '(a'}]\ncriteria: [{id: a, patterns: [un]}]\n",
            "unclosed.yaml: patterns[0].regex: E_REGEX: pattern 'un' is not a valid regex: missing )",
        ),
        (
            "repeat.yaml",
            "metadata: {id: x}\ngoal: g\npatterns: [{id: rp, regex: 'a{2,1}'}]\ncriteria: [{id: a, patterns: [rp]}]\n",
            "repeat.yaml: patterns[0].regex: E_REGEX: pattern 'rp' is not a valid regex: invalid repetition size",
        ),
        (
            "dupes.yaml",
            "metadata: {id: x}\ngoal: g\ncriteria: [{id: a}, {id: a}]\n",
            "dupes.yaml: criteria/groups[1].id: E_DUPLICATE_ID: id 'a' is used twice",
        ),
        (
            "unknown.yaml",
            "metadata: {id: x}\ngoal: g\ncriteria: [{id: a, wieght: 3}]\n",
            "unknown.yaml: field criteria.0.wieght: Extra inputs are not permitted",
        ),
        ("tags.yaml", "metadata: !!python/object/apply:os.system ['true']\n", "tags.yaml: YAML tag refused"),
        (
            "entity.xml",
            '<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]><LLM_JUDGE_SPEC><mission>&e;</mission></LLM_JUDGE_SPEC>',
            "entity.xml: XML with DOCTYPE or ENTITY declarations is refused",
        ),
        (
            "bomb.xml",
            '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]><LLM_JUDGE_SPEC><mission>&b;</mission></LLM_JUDGE_SPEC>',
            "bomb.xml: XML with DOCTYPE or ENTITY declarations is refused",
        ),
    ],
)
def test_bad_rubrics(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    result = run("rubric", "validate", name, cwd=tmp_path)
    assert result.returncode == 1 and message in said(result), said(result)


def test_catastrophic_regex_is_safe_not_refused(tmp_path):
    (tmp_path / "evil.yaml").write_text(
        "metadata: {id: evil}\ngoal: g\npatterns: [{id: p, regex: '(a+)+$'}]\ncriteria: [{id: a, patterns: [p]}]\n"
    )
    assert run("rubric", "validate", "evil.yaml", cwd=tmp_path).returncode == 0


def test_the_non_rubric_file_is_refused_with_its_reason(tmp_path):
    result = run("rubric", "validate", str(SHARED_RUBRICS / "secemp9/completeness_rubric.md"), cwd=tmp_path)
    assert result.returncode == 1 and "not a rubric" in said(result)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("score", "-c", "good", "-r", "no-such-rubric", "--base-url", "http://127.0.0.1:9/v1", "-w", "w.duckdb"),
            "no rubric named 'no-such-rubric'",
        ),
        (
            ("score", "-c", "good", "-r", "missing.yaml", "--base-url", "http://127.0.0.1:9/v1", "-w", "w.duckdb"),
            "missing.yaml: no such file",
        ),
        (("query", "DELETE FROM texts", "-w", "w.duckdb"), "read-only"),
        (("query", "UPDATE texts SET text = 'x'", "-w", "w.duckdb"), "read-only"),
        (("show", "g1", "-w", "nowhere.duckdb"), "no warehouse at nowhere.duckdb"),
    ],
)
def test_bad_commands(landed, args, message):
    result = run(*args, cwd=landed)
    assert result.returncode != 0 and message in said(result), said(result)
    assert ("good", 5) in texts(landed)


def test_what_an_outside_probe_found_unsaid_is_said(tmp_path):
    """`ingest --format openai` of a file of plain texts loaded them as texts (other work than asked);
    a folder's quarantined row named the folder, not its file; `-r ./folder` was "no rubric named
    './folder' in the library"; `llm-slop@9.9.9` did not say which versions there are."""
    (tmp_path / "plain.jsonl").write_text('{"id": "a", "text": "hello there"}\n')
    asked = run("ingest", "plain.jsonl", "-c", "p", "--format", "openai", "-w", "w.duckdb", cwd=tmp_path)
    assert asked.returncode == 2 and "plain.jsonl: --format openai: its first row is no chat transcript" in said(asked)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("A note with words in it.")
    (tmp_path / "notes" / "b.txt").write_text("")
    folder = run("ingest", "notes", "-c", "n", "-w", "w.duckdb", "--allow-quarantine", cwd=tmp_path)
    assert folder.returncode == 0 and "notes: row 2 (file b.txt): empty text" in said(folder)
    for ref, message in (
        ("./notes", "notes: is a folder, not a rubric file"),
        ("llm-slop@9.9.9", "no rubric named 'llm-slop@9.9.9' in the library; llm-slop has version(s) 1.0.0"),
    ):
        refused = run(
            "score", "-c", "n", "-r", ref, "-w", "w.duckdb", "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path
        )
        assert refused.returncode == 2 and message in said(refused), said(refused)
