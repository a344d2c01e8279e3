"""Corpora in, bad rows quarantined with their row number and reason; nothing dropped silently."""

import json

import pyarrow.parquet as pq
import pytest

from rubricflow.tasks.loaders.ingest import CorpusError, check_corpus_id, ingest_corpus


def quarantined(report):
    return {row["row"]: row["reason"] for row in map(json.loads, report.quarantine.read_text().splitlines())}


def test_a_text_that_is_no_string_is_named_for_what_it_is(tmp_path):
    """F33: a number as the text was quarantined as "missing or empty text"."""
    src = tmp_path / "c.jsonl"
    src.write_text('{"id": "a", "text": 42}\n{"id": "b", "text": true}\n{"id": "c"}\n{"id": "d", "text": [1]}\n')
    reasons = quarantined(ingest_corpus(src, tmp_path / "out"))
    assert reasons == {
        1: "text is a number (42), not a string",
        2: "text is true/false (True), not a string",
        3: "missing text",
        4: "text is a list ([1]), not a string",
    }


def test_jsonl_bad_rows_each_get_a_reason(tmp_path):
    src = tmp_path / "c.jsonl"
    lines = [
        b'{"id": "a", "text": "fine text", "genre": "news", "author": "x"}',
        b'{"id": "b", "text": ""}',
        b'{"id": "c", "text": "unterminated',
        b'{"id": "d", "text": "caf\xe9 latin-1"}',
        b'{"id": "e", "text": "' + b"x" * 200 + b'"}',
        b'{"id": "a", "text": "another text under a used id"}',
        b'{"id": "f", "text": {"nested": "json"}}',
        b'["not", "an", "object"]',
        b'{"id": "a", "text": "fine text"}',
        b'{"text": "no id: one is derived from the text"}',
    ]
    src.write_bytes(b"\n".join(lines) + b"\n")
    report = ingest_corpus(src, tmp_path / "out", max_chars=100)
    assert report.rows_ok == 2 and report.rows_quarantined == 7 and report.duplicates_identical == 1
    reasons = quarantined(report)
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7, 8]
    assert reasons[2] == "empty text" and reasons[3].startswith("invalid JSON")
    assert reasons[4].startswith("invalid UTF-8") and reasons[5].startswith("text over the size cap")
    assert (
        reasons[6] == "duplicate text_id with different text"
        and reasons[7] == "text is an object ({'nested': 'json'}), not a string"
    )
    assert reasons[8].startswith("a JSON object is required")
    table = pq.read_table(report.parquet).to_pylist()
    assert table[0]["genre"] == "news" and json.loads(table[0]["metadata"]) == {"author": "x"}
    assert table[1]["text_id"] == table[1]["sha256"][:16]


def test_csv_with_embedded_newlines_and_short_or_long_rows(tmp_path):
    src = tmp_path / "c.csv"
    src.write_text(
        'id,text,genre\n1,"line one\nline two",news\n2,"ok"\n3\n4,"four",x,extra\n5,five,\n', encoding="utf-8"
    )
    report = ingest_corpus(src, tmp_path / "out")
    rows = pq.read_table(report.parquet).to_pylist()
    assert [r["text_id"] for r in rows] == ["1", "5"] and rows[0]["text"] == "line one\nline two"
    reasons = quarantined(report)
    assert reasons[2] == "row has 2 fields, header has 3 (line 4)"  # short rows are not loaded half-empty
    assert reasons[3] == "row has 1 field, header has 3 (line 5)"
    assert reasons[4] == "row has 4 fields, header has 3 (line 6)"


def test_a_csv_field_over_the_csv_modules_default_limit_is_read_whole(tmp_path):
    long_text = "word " * 40_000  # 200,000 characters: over Python's 131,072-character default field limit
    src = tmp_path / "c.csv"
    src.write_text(f'id,text\n1,"{long_text}"\n2,short one\n3,"{long_text}x"\n', encoding="utf-8")
    report = ingest_corpus(src, tmp_path / "out", max_chars=190_000)
    assert [r["text_id"] for r in pq.read_table(report.parquet).to_pylist()] == ["2"]
    reasons = quarantined(report)
    assert set(reasons) == {1, 3} and all(r.startswith("text over the size cap (200") for r in reasons.values())
    assert report.duplicates_identical == 0


def test_broken_csv_quoting_is_quarantined_and_the_rows_after_it_are_read(tmp_path):
    src = tmp_path / "c.csv"
    src.write_text('id,text\n1,fine\n2,"bad"quote\n3,also fine\n', encoding="utf-8")
    report = ingest_corpus(src, tmp_path / "out")
    assert [r["text_id"] for r in pq.read_table(report.parquet).to_pylist()] == ["1", "3"]
    assert quarantined(report)[2].startswith("malformed CSV on line 3")


def test_an_unterminated_quote_quarantines_the_rest_of_the_file_by_name(tmp_path):
    src = tmp_path / "c.csv"
    src.write_text('id,text\n1,fine\n2,"never closed\n3,swallowed\n4,swallowed too\n', encoding="utf-8")
    report = ingest_corpus(src, tmp_path / "out")
    assert [r["text_id"] for r in pq.read_table(report.parquet).to_pylist()] == ["1"]
    assert quarantined(report)[2] == (
        "malformed CSV: a quoted field opened on line 3 never closes; "
        "line 3 to the end of the file was not read as rows"
    )


def test_parquet_and_folder_sources(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("first document")
    (folder / "sub" / "b.md").write_text("# second")
    (folder / "bad.txt").write_bytes(b"\xff\xfe broken")
    report = ingest_corpus(folder, tmp_path / "out1")
    assert sorted(r["text_id"] for r in pq.read_table(report.parquet).to_pylist()) == ["a.txt", "sub/b.md"]
    assert report.rows_quarantined == 1
    again = ingest_corpus(report.parquet, tmp_path / "out2")
    assert again.rows_ok == 2


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "empty corpus"),
        ('{"id": 1, "body": "no text column"}\n', "has no text column"),
    ],
)
def test_corpus_level_errors(tmp_path, content, message):
    src = tmp_path / "c.jsonl"
    src.write_text(content)
    with pytest.raises(CorpusError, match=message):
        ingest_corpus(src, tmp_path / "out")
    assert not (tmp_path / "out" / "texts.parquet").exists()


def test_missing_source_and_unknown_format(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        ingest_corpus(tmp_path / "nope.jsonl", tmp_path / "out")
    odd = tmp_path / "c.xlsx"
    odd.write_text("x")
    with pytest.raises(CorpusError, match="unsupported corpus format"):
        ingest_corpus(odd, tmp_path / "out")


def test_links_in_a_corpus_folder_are_not_followed(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("outside the corpus")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "deep.txt").write_text("also outside")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("inside")
    (folder / "link.txt").symlink_to(outside)
    (folder / "linked-dir").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    report = ingest_corpus(folder, tmp_path / "out")
    texts = pq.read_table(report.parquet).to_pylist()
    assert [t["text"] for t in texts] == ["inside"]
    assert list(quarantined(report).values()) == ["a symbolic link: not followed"]


@pytest.mark.parametrize("corpus_id", ["../../x", "a/b", ".hidden", "", "x" * 200, "a..b", "sp ace"])
def test_a_corpus_id_must_be_a_plain_name(corpus_id):
    with pytest.raises(CorpusError, match="is not a name"):
        check_corpus_id(corpus_id)


def test_plain_corpus_ids_pass():
    assert [check_corpus_id(c) for c in ("replies", "topical-chat", "v1.2_x")] == ["replies", "topical-chat", "v1.2_x"]


def test_an_id_field_names_each_texts_id_and_rows_without_it_are_quarantined(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {"uid": "a-1", "id": "ignored", "text": "first"},
                {"uid": "", "text": "second"},
                {"uid": 7, "text": "third"},
            ]
        )
    )
    report = ingest_corpus(src, tmp_path / "out", id_field="uid")
    assert pq.read_table(report.parquet).column("text_id").to_pylist() == ["a-1", "7"]
    assert (
        report.rows_quarantined == 1 and "missing or empty id (uid)" in (tmp_path / "out/quarantine.jsonl").read_text()
    )
    with pytest.raises(CorpusError, match=r"row 1 has no id column 'key'"):
        ingest_corpus(src, tmp_path / "out2", id_field="key")
    default = ingest_corpus(src, tmp_path / "out3")  # without: `id`, else the text's sha256 prefix
    assert pq.read_table(default.parquet).column("text_id").to_pylist()[0] == "ignored"


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("excel.csv", "\ufeffid,text\r\n007,first text\r\nx1f,second text\r\n"),  # Excel's "CSV UTF-8" export
        ("notepad.jsonl", '\ufeff{"id": "007", "text": "first text"}\n{"id": "x1f", "text": "second text"}\n'),
        ("array.json", '\ufeff[{"id": "007", "text": "first text"}, {"id": "x1f", "text": "second text"}]'),
    ],
)
def test_a_byte_order_mark_is_not_part_of_the_first_field(tmp_path, name, content):
    """N14: a BOM made an Excel CSV's `id` column unknown (ids derived from the text instead) and
    quarantined a JSONL file's first row as invalid JSON."""
    src = tmp_path / name
    src.write_text(content, encoding="utf-8")
    report = ingest_corpus(src, tmp_path / "out", max_chars=100)
    assert (report.rows_ok, report.rows_quarantined) == (2, 0)
    assert [r["text_id"] for r in pq.read_table(report.parquet).to_pylist()] == ["007", "x1f"]


def test_a_bom_in_a_text_file_of_a_folder_is_not_part_of_the_text(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("\ufeffHello there.", encoding="utf-8")
    report = ingest_corpus(tmp_path / "src", tmp_path / "out", max_chars=100)
    assert pq.read_table(report.parquet).to_pylist()[0]["text"] == "Hello there."


@pytest.mark.parametrize("compression", ["gzip", "zstd", "bz2"])
@pytest.mark.parametrize("form", ["jsonl", "csv", "json"])
def test_a_compressed_corpus_is_read_as_it_streams(tmp_path, compression, form):
    """Issue 26: `replies.jsonl.gz` (or .zst, .bz2; JSONL, CSV or JSON) was refused as an unknown format."""
    import pyarrow as pa

    rows = [{"id": "a", "text": "first text"}, {"id": "b", "text": "second, with a comma"}]
    body = {
        "jsonl": "".join(json.dumps(r) + "\n" for r in rows),
        "json": json.dumps(rows),
        "csv": 'id,text\r\na,first text\r\nb,"second, with a comma"\r\n',
    }[form]
    suffix = {"gzip": ".gz", "zstd": ".zst", "bz2": ".bz2"}[compression]
    path = tmp_path / f"c.{form}{suffix}"
    with pa.output_stream(str(path), compression=compression) as out:
        out.write(body.encode())
    report = ingest_corpus(path, tmp_path / "out")
    assert report.rows_ok == 2 and report.rows_quarantined == 0
    table = pq.read_table(report.parquet).to_pylist()
    assert [(r["text_id"], r["text"]) for r in table] == [("a", "first text"), ("b", "second, with a comma")]


def test_a_nul_byte_or_crlf_in_a_text_is_kept_as_written(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_bytes(b'{"id": "a", "text": "before\\u0000after"}\r\n{"id": "b", "text": "two\\r\\nlines"}\r\n')
    report = ingest_corpus(src, tmp_path / "out")
    assert report.rows_ok == 2
    assert [r["text"] for r in pq.read_table(report.parquet).to_pylist()] == ["before\x00after", "two\r\nlines"]


def test_parquet_with_nested_columns_keeps_them_as_metadata(tmp_path):
    import datetime

    import pyarrow as pa

    table = pa.table(
        {
            "id": ["a", "b"],
            "text": ["x one", "y two"],
            "meta": [{"k": 1, "d": datetime.date(2024, 1, 2)}, {"k": 2, "d": None}],
            "tags": [["t1"], []],
        }
    )
    pq.write_table(table, tmp_path / "nested.parquet")
    report = ingest_corpus(tmp_path / "nested.parquet", tmp_path / "out")
    assert report.rows_ok == 2
    first = pq.read_table(report.parquet).to_pylist()[0]
    assert json.loads(first["metadata"]) == {"meta": {"k": 1, "d": "2024-01-02"}, "tags": ["t1"]}


@pytest.mark.parametrize(
    ("name", "content", "encoding"),
    [
        ("semicolons.csv", "id;text\r\n007;first text, with a comma\r\nx1f;second text\r\n", "utf-8"),
        ("unicode-text.txt.csv", "id\ttext\r\n007\tfirst text\r\nx1f\tsecond text\r\n", "utf-16"),
    ],
)
def test_excel_csv_exports_in_other_locales_and_unicode_text_are_read(tmp_path, name, content, encoding):
    """Issue 26: Excel writes `;` as the separator where `,` is the decimal comma, and its
    "Unicode Text" export is UTF-16 with tabs; both were read as one column and refused."""
    src = tmp_path / name
    src.write_text(content, encoding=encoding)  # Python's utf-16 writes the byte-order mark Excel writes
    report = ingest_corpus(src, tmp_path / "out", max_chars=100)
    assert (report.rows_ok, report.rows_quarantined) == (2, 0)
    first = "first text, with a comma" if ";" in content else "first text"
    rows = pq.read_table(report.parquet).to_pylist()
    assert [(r["text_id"], r["text"]) for r in rows] == [("007", first), ("x1f", "second text")]


def test_a_csv_in_a_windows_code_page_is_refused_naming_its_row_and_read_with_encoding(tmp_path):
    """Excel's plain "CSV (Comma delimited)" export on Windows is cp1252: not guessed at. The error
    names the row the first such byte is in (row 9 here; the reader decodes 8 KiB blocks, and it
    used to blame the header line and count "1 row quarantined" of none), and --encoding reads it."""
    rows = ["id,text"] + [f"t{i},plain text number {i} " + "x" * 900 for i in range(1, 9)]
    rows += ["t9,caf\u00e9 cr\u00e8me"] + [f"t{i},more text {i}" for i in range(10, 13)]
    src = tmp_path / "legacy.csv"
    src.write_bytes(("\r\n".join(rows) + "\r\n").encode("cp1252"))
    with pytest.raises(
        CorpusError, match=r"legacy.csv: row 9 \(line 10\): byte 0xE9 is not utf-8; .*--encoding cp1252"
    ):
        ingest_corpus(src, tmp_path / "out", max_chars=2000)
    assert not (tmp_path / "out" / "quarantine.jsonl").exists()
    report = ingest_corpus(src, tmp_path / "out", max_chars=2000, encoding="cp1252")
    assert (report.rows_ok, report.rows_quarantined) == (12, 0)
    texts = {r["text_id"]: r["text"] for r in pq.read_table(report.parquet).to_pylist()}
    assert texts["t9"] == "caf\u00e9 cr\u00e8me"
    with pytest.raises(CorpusError, match="--encoding 'cp9999': not a text encoding"):
        ingest_corpus(src, tmp_path / "out", encoding="cp9999")


@pytest.mark.parametrize("name", ["unicode.txt", "unicode.tsv"])
def test_excel_unicode_text_saved_as_txt_or_tsv_is_read(tmp_path, name):
    """Excel's "Unicode Text" is UTF-16 with tabs, saved as .txt; a .tsv the same."""
    src = tmp_path / name
    src.write_text("id\ttext\r\nu1\tna\u00efve \u00fcber\r\nu2\tzwei\r\n", encoding="utf-16")
    report = ingest_corpus(src, tmp_path / "out")
    assert [(r["text_id"], r["text"]) for r in pq.read_table(report.parquet).to_pylist()] == [
        ("u1", "na\u00efve \u00fcber"),
        ("u2", "zwei"),
    ]


GOOD = json.dumps({"id": "g1", "text": "a good text"}) + "\n" + json.dumps({"id": "g2", "text": "another"}) + "\n"


@pytest.mark.parametrize(
    "bad_row, reason",
    [
        ('{"id": "s", "text": "bad \\ud800 here"}', "a lone surrogate"),  # 300+ lines of traceback each, before
        ('{"id": ' + "9" * 5000 + ', "text": "x"}', "a number too long to read"),
        ('{"id": "d", "text": "x", "m": ' + "[" * 100_000 + "]" * 100_000 + "}", "JSON nested too deeply"),
    ],
)
def test_an_unreadable_jsonl_row_is_quarantined_by_row_and_the_good_rows_kept(tmp_path, bad_row, reason):
    source = tmp_path / "c.jsonl"
    source.write_text(GOOD + bad_row + "\n")
    report = ingest_corpus(source, tmp_path / "out")
    assert report.rows_ok == 2 and report.rows_quarantined == 1
    [row] = [json.loads(line) for line in report.quarantine.read_text().splitlines()]
    assert row["row"] == 3 and row["reason"].startswith(reason) and "\n" not in row["reason"]


def test_a_json_array_too_deep_or_with_a_lone_surrogate_is_refused_in_one_line(tmp_path):
    for name, body in (("deep.json", "[" * 100_000 + "]" * 100_000), ("s.json", '[{"text": "\\udfff"}]')):
        (tmp_path / name).write_text(body)
        with pytest.raises(CorpusError, match=f"{name}: not a readable JSON array|{name}: a lone surrogate") as caught:
            ingest_corpus(tmp_path / name, tmp_path / "out")
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize("what", ["fake", "truncated"])
def test_a_fake_or_truncated_gzip_is_refused_in_one_line_naming_it(tmp_path, what):
    import gzip

    source = tmp_path / "c.jsonl.gz"
    whole = gzip.compress((GOOD * 2000).encode())
    source.write_bytes(b"plain text, no gzip\n" if what == "fake" else whole[: len(whole) // 2])
    with pytest.raises(CorpusError, match=r"c\.jsonl\.gz: not a readable gzip file") as caught:
        ingest_corpus(source, tmp_path / "out")
    assert "\n" not in str(caught.value) and not (tmp_path / "out" / "texts.parquet").exists()
