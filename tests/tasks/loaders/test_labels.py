"""Labels into the warehouse: a hand-graded PaperBench tree becomes labels of every node, and the
warehouse's tree aggregation over the leaf grades reproduces every internal node's grade."""

import json

import pytest

from rubricflow.tasks.loaders.labels import import_graded_tree
from tests.conftest import ROOT, SHARED_RUBRICS, rows

GRADED = SHARED_RUBRICS / "paperbench/semantic-self-consistency.expected_result.json"


def weighted_means(node: dict) -> dict[str, float]:
    """Each internal node's weighted mean of its children's grades, computed here from the file."""
    out = {}
    children = node.get("sub_tasks") or []
    if children:
        for child in children:
            out.update(weighted_means(child))
        out[node["id"]] = sum(c["weight"] * c["score"] for c in children) / sum(c["weight"] for c in children)
    return out


def test_a_graded_tree_lands_as_labels_and_every_internal_node_checks(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    n, rubric_hash, check = import_graded_tree(GRADED, "papers", warehouse)
    tree = json.loads(GRADED.read_text())
    expected = weighted_means(tree)
    assert n == 102 and len(check) == len(expected) == 23
    for c in check:
        assert c["agrees"] and c["aggregated"] == pytest.approx(expected[c["node_id"]])
    (root,) = [c for c in check if c["node_id"] == tree["id"]]
    assert root["graded"] == pytest.approx(0.91)
    assert rows(warehouse, "SELECT count(DISTINCT rater), min(text_id) FROM labels") == [
        (1, "semantic-self-consistency")
    ]


def score_from_children(children: list[dict]) -> float:
    """PaperBench's own (openai/preparedness, paperbench graded_task_node.py): children whose
    weights sum to 0 give 0.0, not NaN (seed 003: PaperBench parity)."""
    total = sum(c["weight"] for c in children)
    return 0.0 if total == 0 else sum(c["score"] * c["weight"] for c in children) / total


def graded_by_paperbench(node: dict) -> dict:
    """The tree with every internal node's grade as PaperBench aggregates its leaves' grades."""
    children = [graded_by_paperbench(c) for c in node.get("sub_tasks") or []]
    return {**node, "sub_tasks": children} | ({"score": score_from_children(children)} if children else {})


def test_children_that_all_weigh_nothing_give_their_parent_paperbenchs_zero(tmp_path):
    """A node whose children all weigh 0 scores 0 in PaperBench, and counts as 0 in its own parent.
    The warehouse gave it no value and Python left it out of its parent (the root then 1.0 higher
    in that node's share)."""
    from rubricflow.rubrics.formats import load_rubric
    from rubricflow.rubrics.scoring import aggregate

    tree = json.loads(GRADED.read_text())
    zeroed = tree["sub_tasks"][0]
    assert zeroed["sub_tasks"] and all(not c["sub_tasks"] and c["score"] == 1.0 for c in zeroed["sub_tasks"])
    for child in zeroed["sub_tasks"]:
        child["weight"] = 0
    tree = graded_by_paperbench(tree)
    path = tmp_path / "zeroed.expected_result.json"
    path.write_text(json.dumps(tree))
    _, _, check = import_graded_tree(path, "papers", tmp_path / "w.duckdb")
    by_node = {c["node_id"]: c for c in check}
    assert by_node[zeroed["id"]]["aggregated"] == 0.0 and by_node[zeroed["id"]]["agrees"]
    assert all(c["agrees"] for c in check) and len(check) == 23
    assert by_node[tree["id"]]["aggregated"] == pytest.approx(tree["score"])
    leaves = {}

    def grades(node: dict) -> None:
        for child in node["sub_tasks"]:
            grades(child)
        if not node["sub_tasks"]:
            leaves[node["id"]] = node["score"]

    grades(tree)
    assert aggregate(load_rubric(path), leaves) == pytest.approx(tree["score"])
    without = score_from_children([c for c in tree["sub_tasks"] if c["id"] != zeroed["id"]])
    assert without != pytest.approx(tree["score"])  # leaving the node out is another root


def test_a_grade_that_contradicts_its_leaves_is_found(tmp_path):
    tree = json.loads(GRADED.read_text())
    tree["sub_tasks"][0]["score"] = 0.25  # the grader's aggregate, no longer the mean of its leaves
    broken = tmp_path / "broken.expected_result.json"
    broken.write_text(json.dumps(tree))
    _, _, check = import_graded_tree(broken, "papers", tmp_path / "w.duckdb")
    wrong = {c["node_id"] for c in check if not c["agrees"]}
    assert tree["sub_tasks"][0]["id"] in wrong


def test_label_ids_stay_as_written_in_a_csv_with_a_bom(tmp_path):
    """Issue 26: a labels CSV guessed id types ("007" -> 7, hex ids refused); ids are strings,
    exactly as `ingest` keeps them, and an Excel BOM is not part of the first column's name."""
    from rubricflow.tasks.loaders.labels import read_labels

    path = tmp_path / "labels.csv"
    path.write_bytes(b"\xef\xbb\xbftext_id,criterion,rater,score\r\n007,c,h,3\r\n0x1f,c,h,4\r\n12e3,c,h,2\r\n")
    frame = read_labels(path)
    assert frame["text_id"].to_list() == ["007", "0x1f", "12e3"]
    assert frame["score"].to_list() == [3.0, 4.0, 2.0]


def test_purely_numeric_label_ids_keep_their_leading_zeros(tmp_path):
    """Ids that all look like numbers are still text: "007" and "010" stay as written."""
    from rubricflow.tasks.loaders.labels import read_labels

    path = tmp_path / "labels.csv"
    path.write_text("text_id,criterion,rater,score\n007,c,h,3\n010,c,h,4\n")
    assert read_labels(path)["text_id"].to_list() == ["007", "010"]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (",c,h,3", "row 1: text_id is empty"),
        ("t1,,h,3", "row 1: criterion is empty"),
        ("t1,c, ,3", "row 1: rater is empty"),
    ],
)
def test_an_empty_id_is_refused_by_row_and_column(tmp_path, row, message):
    """F25: an empty rater or criterion was a ConstraintException traceback from the warehouse."""
    from rubricflow.tasks.loaders.labels import LabelError, read_labels

    path = tmp_path / "labels.csv"
    path.write_text(f"text_id,criterion,rater,score\n{row}\n")
    with pytest.raises(LabelError, match=message):
        read_labels(path)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (  # wide, SummEval-style: one column per criterion and an annotator column
            "summeval.csv",
            "id,annotator,coherence,consistency,fluency,relevance\nd1,a1,4,5,5,3\nd1,a2,3,5,4,3\n",
            {("d1", "a1", "coherence", 4.0), ("d1", "a2", "relevance", 3.0)},
        ),
        (  # wide without raters, HANNA-style numeric columns beside the story text; an empty cell is not rated
            "hanna.csv",
            "text_id,text,Relevance,Coherence\ns1,Once upon a time,4,\ns2,The end,2,3\n",
            {("s1", "human", "Relevance", 4.0), ("s2", "human", "Coherence", 3.0)},
        ),
        (  # long without raters, JSONL
            "judge.jsonl",
            '{"text_id": "t1", "criterion": "overall", "score": 0.5}\n',
            {("t1", "human", "overall", 0.5)},
        ),
    ],
)
def test_wide_and_rater_free_label_files_import(tmp_path, name, content, expected):
    """Issue 26: only long files with a rater column were read; wide files (one column per criterion,
    as SummEval, HANNA and UniEval's outputs are shared) and files without raters are common."""
    from rubricflow.tasks.loaders.labels import read_labels

    path = tmp_path / name
    path.write_text(content)
    frame = read_labels(path)
    rows = set(frame.select("text_id", "rater", "criterion_id", "score").iter_rows())
    assert expected <= rows and frame["text_id"].dtype == frame["rater"].dtype
    assert not {r for r in rows if r[2] in ("text", "id", "annotator")}


def test_a_label_file_of_no_known_layout_says_what_it_found(tmp_path):
    from rubricflow.tasks.loaders.labels import LabelError, read_labels

    path = tmp_path / "labels.csv"
    path.write_text("doc,comment\nd1,nice\n")
    with pytest.raises(LabelError, match=r"no text id column \(text_id or id\); found \['doc', 'comment'\]"):
        read_labels(path)


def test_a_unieval_release_with_reference_instead_of_context_imports(tmp_path):
    """Issue 26: UniEval's sets other than Topical-Chat (SFHOT, SummEval) give `reference` where
    Topical-Chat gives `context`, and the folder import failed on the missing key."""
    from rubricflow.tasks.loaders.labels import LabelError, import_topical_chat

    folder = tmp_path / "sfhot"
    folder.mkdir()
    records = [  # the layout of UniEval's reproduce/unieval_predict/data2text/sfhot_result.json
        {"doc_id": i, "source": f"confirm(area='{a}')", "reference": f"Confirms the area {a} .",
         "system_output": f"You want a hotel in {a} ?", "scores": {"naturalness": 3.5 + i, "overall": 4.0},
         "predict_scores": {"naturalness": 0.9, "overall": 0.8}}
        for i, a in enumerate(["cathedral hill", "soma"])
    ]  # fmt: skip
    records.append({k: v for k, v in records[0].items() if k != "predict_scores"})  # no judge scores: human only
    (folder / "judge_predictions.json").write_text(json.dumps(records))
    warehouse = tmp_path / "w.duckdb"
    import_topical_chat(folder, "sfhot", warehouse)
    assert rows(warehouse, "SELECT text_id, context, input FROM texts ORDER BY text_id")[0] == (
        "row-0000", "Confirms the area cathedral hill .", "confirm(area='cathedral hill')"
    )  # fmt: skip
    assert rows(warehouse, "SELECT rater, count(*) FROM labels GROUP BY rater ORDER BY rater") == [
        ("human", 6), ("unieval", 4)
    ]  # fmt: skip
    (folder / "judge_predictions.json").write_text(json.dumps([{"source": "x", "scores": {}}]))
    with pytest.raises(LabelError, match=r"judge_predictions.json: row 1 has no `system_output`"):
        import_topical_chat(folder, "bad", warehouse)


def test_the_second_human_labelled_set_sfhot_imports_whole(tmp_path):
    """The project's second human-labelled set (tests/data/calibration/sfhot: UniEval's release of
    SFHOT, SOURCE.md there) reads as a corpus: every utterance with its dialogue act as input and the
    human reference as context, three human and three UniEval scores each."""
    from rubricflow.tasks.loaders.labels import import_topical_chat

    warehouse = tmp_path / "w.duckdb"
    import_topical_chat(ROOT / "tests" / "data" / "calibration" / "sfhot", "sfhot", warehouse)
    assert rows(warehouse, "SELECT count(*), count(input), count(context) FROM texts") == [(875, 875, 875)]
    assert rows(warehouse, "SELECT rater, count(*), min(score), max(score) FROM labels GROUP BY 1 ORDER BY 1")[0] == (
        "human", 3 * 875, 1.0, 6.0
    )  # fmt: skip
    criteria = rows(warehouse, "SELECT DISTINCT criterion_id FROM labels WHERE rater = 'human' ORDER BY 1")
    assert criteria == [("informativeness",), ("naturalness",), ("overall",)]


@pytest.mark.parametrize(
    ("content", "encoding"),
    [
        ("text_id;criterion;rater;score\r\n007;clarity;ann;4\r\nx1f;clarity;ann;2\r\n", "utf-8-sig"),
        ("text_id\tcriterion\trater\tscore\r\n007\tclarity\tann\t4\r\nx1f\tclarity\tann\t2\r\n", "utf-16"),
    ],
)
def test_label_csvs_from_excel_in_other_locales_import(tmp_path, content, encoding):
    """Issue 26: a label CSV separated by semicolons (Excel where the comma is the decimal mark) or
    Excel's UTF-16 "Unicode Text" export was read as one column and refused."""
    from rubricflow.tasks.loaders.labels import read_labels

    path = tmp_path / "labels.csv"
    path.write_text(content, encoding=encoding)
    frame = read_labels(path)
    assert frame.select("text_id", "criterion_id", "rater", "score").rows() == [
        ("007", "clarity", "ann", 4.0), ("x1f", "clarity", "ann", 2.0)
    ]  # fmt: skip


@pytest.mark.parametrize(
    "columns",
    [
        {"text_id": [7, 12], "criterion": ["c", "c"], "rater": ["r1", "r2"], "score": [3, 4]},  # long
        {"id": [7, 12], "annotator": ["r1", "r2"], "c": [3.0, 4.0]},  # wide, one column per criterion
    ],
    ids=["long", "wide"],
)
def test_parquet_labels_with_integer_ids_name_the_texts_ingest_kept(tmp_path, columns):
    """Ids are strings exactly as `ingest` keeps them: a Parquet corpus and its Parquet labels, both
    with integer ids, meet on the same text ids (a label of text 7 is a label of the text "7")."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rubricflow.tasks.loaders.ingest import ingest_corpus
    from rubricflow.tasks.loaders.labels import read_labels

    pq.write_table(pa.table({"id": [7, 12], "text": ["seven", "twelve"]}), tmp_path / "corpus.parquet")
    kept = pq.read_table(ingest_corpus(tmp_path / "corpus.parquet", tmp_path / "out").parquet)["text_id"].to_pylist()
    pq.write_table(pa.table(columns), tmp_path / "labels.parquet")
    frame = read_labels(tmp_path / "labels.parquet")
    assert kept == ["7", "12"]
    assert set(frame.select("text_id", "rater", "criterion_id", "score").iter_rows()) == {
        ("7", "r1", "c", 3.0),
        ("12", "r2", "c", 4.0),
    }


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ('{"text_id": "t0", "criterion": [1, 2], "rater": "r", "score": 3}', "criterion"),
        ('{"text_id": "t0", "criterion": "c", "rater": "r", "score": {"mean": 3}}', "score"),
    ],
)
def test_a_label_field_holding_a_list_or_an_object_is_refused_by_column(tmp_path, line, column):
    """A JSONL label whose criterion is a list (or score an object) was a polars cast traceback."""
    from rubricflow.tasks.loaders.labels import LabelError, read_labels

    path = tmp_path / "labels.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(LabelError, match=rf"labels.jsonl: row 1: {column} holds a list or an object"):
        read_labels(path)


def test_a_label_written_twice_unlike_is_refused_and_alike_kept_once(tmp_path):
    """An outside probe: t00 labelled 2 then 5 by one rater printed "3 labels" and stored 2, the
    first silently winning (the last, across files)."""
    from rubricflow.errors import InputError
    from rubricflow.tasks.loaders.labels import read_labels

    twice = tmp_path / "twice.csv"
    twice.write_text("text_id,criterion,score\nt00,usefulness,2\nt01,usefulness,4\nt00,usefulness,5\n")
    with pytest.raises(InputError, match=r"twice.csv: rows 1 and 3: text 't00', criterion 'usefulness'.* 2 and 5"):
        read_labels(twice)
    alike = tmp_path / "alike.csv"
    alike.write_text("text_id,criterion,score\nt00,usefulness,2\nt01,usefulness,4\nt00,usefulness,2\n")
    assert read_labels(alike).rows() == [("t00", "usefulness", "human", 2.0), ("t01", "usefulness", "human", 4.0)]


def test_a_criterion_column_with_a_word_among_its_numbers_is_refused_by_row(tmp_path):
    """One `n/a` cell in a wide file's criterion column dropped all its 11 good labels, exit 0."""
    from rubricflow.errors import InputError
    from rubricflow.tasks.loaders.labels import read_labels

    wide = tmp_path / "wide.csv"
    wide.write_text(
        "text_id,usefulness,comment\n" + "".join(f"t{i},{i % 5 + 1},fine\n" for i in range(6)) + "t6,n/a,x\n"
    )
    with pytest.raises(InputError, match=r"wide.csv: row 7: column 'usefulness' holds 'n/a', not a number"):
        read_labels(wide)


def test_labels_import_says_the_criteria_it_stored(tmp_path):
    """A wide file's numeric column named like a text column (`model` here), of no criterion the
    corpus knows, is not read as one: the import names the criteria it stored and warns naming the
    column (the line named the raters only, and the `model` labels were gone without a word)."""
    from tests.conftest import run_cli

    (tmp_path / "wide.csv").write_text("text_id,model,clarity,depth\na,1,3,2\nb,0,2,1\n", encoding="utf-8")
    done = run_cli(tmp_path, "labels", "import", "wide.csv", "-c", "c")
    assert done.returncode == 0, done.stderr
    assert "4 labels for corpus c from wide.csv (raters: human; criteria: clarity, depth)" in done.stdout
    assert "warning: wide.csv: columns not read as labels: 'model' (a text column's name" in done.stderr


def _labelled_corpus(tmp_path, long: str):
    """Corpus `c` (texts t1..t4) with bob's labels from a long file (`long`: its rows)."""
    from tests.conftest import run_cli

    (tmp_path / "c.jsonl").write_text("".join(f'{{"id": "t{i}", "text": "Text {i}."}}\n' for i in range(1, 5)))
    assert run_cli(tmp_path, "ingest", "c.jsonl", "-c", "c").returncode == 0
    (tmp_path / "long.csv").write_text("text_id,criterion,score,rater\n" + long)
    assert run_cli(tmp_path, "labels", "long.csv", "-c", "c").returncode == 0


def test_a_wide_files_rater_column_is_the_criterion_of_that_name_with_rater_given(tmp_path):
    """An outside probe: a wide file (id, rater, ten) of a rubric whose criterion is named `rater`,
    imported with --rater ann, stored ann's `rater` scores as 5 raters named 0.0, 0.25, 0.5...,
    lost the criterion and ignored --rater; calibrate then counted them as humans."""
    from tests.conftest import rows, run_cli

    _labelled_corpus(tmp_path, "".join(f"t{i},{c},{i / 4},bob\n" for i in range(1, 5) for c in ("rater", "ten")))
    (tmp_path / "w1.csv").write_text("id,rater,ten\nt1,0.5,5\nt2,1.0,10\nt3,0.25,2\nt4,0.0,\n")
    unsaid = run_cli(tmp_path, "labels", "w1.csv", "-c", "c")  # which is the column: raters or the criterion?
    assert unsaid.returncode == 2 and (
        "w1.csv: column 'rater' is both a criterion of the corpus and a rater column's name: give --rater NAME "
        "to read it as the criterion, or use the long format"
    ) in " ".join(unsaid.stderr.split())
    assert rows(tmp_path / "w.duckdb", "SELECT DISTINCT rater FROM labels") == [("bob",)]  # nothing stored

    done = run_cli(tmp_path, "labels", "w1.csv", "-c", "c", "--rater", "ann")
    assert done.returncode == 0, done.stderr
    assert "7 labels for corpus c from w1.csv (raters: ann; criteria: rater, ten)" in " ".join(done.stdout.split())
    assert rows(tmp_path / "w.duckdb", "SELECT text_id, criterion_id, score FROM labels WHERE rater = 'ann' ORDER BY ALL") == [
        ("t1", "rater", 0.5), ("t1", "ten", 5.0), ("t2", "rater", 1.0), ("t2", "ten", 10.0),
        ("t3", "rater", 0.25), ("t3", "ten", 2.0), ("t4", "rater", 0.0),
    ]  # fmt: skip
    assert rows(tmp_path / "w.duckdb", "SELECT DISTINCT rater FROM labels ORDER BY 1") == [("ann",), ("bob",)]

    # a corpus with no criterion `rater` (nothing scored or labelled): refused, not read as raters
    fresh = run_cli(tmp_path, "labels", "w1.csv", "-c", "d", "--rater", "ann")
    assert fresh.returncode == 2 and (
        "w1.csv: column 'rater' holds numbers, not raters' names, and --rater ann names the rater: the corpus has "
        "no criterion 'rater'"
    ) in " ".join(fresh.stderr.split())
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM labels WHERE corpus_id = 'd'") == [(0,)]


def test_a_wide_files_text_column_is_the_criterion_of_that_name_the_corpus_was_scored_on(tmp_path):
    """An outside probe: a wide file (id, overall, text) of a rubric whose criterion is named `text`,
    imported with --rater bob, stored `overall` only: the `text` column dropped without a word."""
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.formats import load_rubric
    from rubricflow.warehouse import db
    from tests.conftest import rows, run_cli

    _labelled_corpus(tmp_path, "t1,other,1,bob\n")
    rubric = tmp_path / "edge.yaml"
    rubric.write_text(
        "metadata: {id: edge, version: 1.0.0, title: Edge, description: Criteria named like label columns.}\n"
        "goal: Judge the texts.\ncriteria:\n"
        "  - {id: text, title: Text, description: yes or no., scale: {kind: binary, labels: ['no', 'yes']}}\n"
        "  - {id: overall, title: Overall, description: 0-10., scale: {kind: numeric, min: 0, max: 10, step: 0.5}}\n"
    )
    bundle = compile_or_raise(load_rubric(rubric), source=str(rubric))
    with db.writer(tmp_path / "w.duckdb") as con:  # the corpus scored with it: a run of that rubric
        db.register_rubric(con, bundle, str(rubric))
        con.execute(
            "INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples, parameters, "
            "status, started_at) VALUES ('r1', 'c', ?, 'j', 'm', 'holistic', 1, '{}', 'completed', now())",
            [bundle.hash],
        )
    (tmp_path / "w2.csv").write_text("id,overall,text\nt1,5.0,0\nt2,10.0,1\nt3,2.5,0\n")
    done = run_cli(tmp_path, "labels", "w2.csv", "-c", "c", "--rater", "bob")
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    assert "6 labels for corpus c from w2.csv (raters: bob; criteria: overall, text)" in " ".join(done.stdout.split())
    stored = "SELECT text_id, criterion_id, score FROM labels WHERE criterion_id = 'text' ORDER BY ALL"
    assert rows(tmp_path / "w.duckdb", stored) == [("t1", "text", 0.0), ("t2", "text", 1.0), ("t3", "text", 0.0)]

    # a corpus that has no criterion `text`: the column is not read, and a warning line says so
    fresh = run_cli(tmp_path, "labels", "w2.csv", "-c", "d", "--rater", "bob")
    assert fresh.returncode == 0 and "criteria: overall)" in fresh.stdout, fresh.stderr
    assert (
        "warning: w2.csv: columns not read as labels: 'text' (a text column's name, and no criterion of the "
        "corpus has it: give its labels in the long format)"
    ) in " ".join(fresh.stderr.split())
    assert rows(tmp_path / "w.duckdb", "SELECT DISTINCT criterion_id FROM labels WHERE corpus_id = 'd'") == [
        ("overall",)
    ]


def test_a_wide_files_score_column_is_a_criterion_the_corpus_knows_else_refused_with_why(tmp_path):
    """`id,score`: a long file without its criterion column, or a wide one of a criterion `score`."""
    from rubricflow.tasks.loaders.labels import LabelError, read_labels

    path = tmp_path / "w3.csv"
    path.write_text("id,score,comment\nt1,3,fine\nt2,5,\n")
    assert read_labels(path, "ann", known={"score"}).rows() == [
        ("t1", "score", "ann", 3.0),
        ("t2", "score", "ann", 5.0),
    ]
    with pytest.raises(LabelError) as refused:
        read_labels(path, "ann")
    assert str(refused.value) == (
        f"{path}: missing columns ['criterion'] (long: text_id, criterion, score[, rater]); found ['id', 'score', "
        "'comment']; a wide file's column 'score' is read as a criterion only where the corpus has one of that "
        "name (a rubric that scored it, or its labels): else give those labels in the long format"
    )


def test_every_column_a_wide_file_does_not_read_is_named(tmp_path):
    """A column that is no id, rater or criterion (words, a text's column) was dropped without a word;
    so was --rater beside a file naming its raters."""
    from rubricflow.tasks.loaders.labels import _read_file, label_frame

    path = tmp_path / "hanna.csv"
    path.write_text("text_id,text,model,annotator,Relevance,note\ns1,Once,3,a1,4,ok\ns2,The end,1,a2,2,\n")
    frame, notes = label_frame(_read_file(path), path, "human", known={"Relevance"})
    assert set(frame.rows()) == {("s1", "Relevance", "a1", 4.0), ("s2", "Relevance", "a2", 2.0)}
    assert notes == [
        f"{path}: --rater human not used: column 'annotator' names each label's rater",
        f"{path}: columns not read as labels: 'text' (not numbers), 'model' (a text column's name, and no "
        "criterion of the corpus has it: give its labels in the long format), 'note' (not numbers)",
    ]
    frame, notes = label_frame(_read_file(path), path, None, known={"model"})  # a criterion named `model`
    assert ("s1", "model", "a1", 3.0) in frame.rows() and notes == [
        f"{path}: columns not read as labels: 'text' (not numbers), 'note' (not numbers)"
    ]
