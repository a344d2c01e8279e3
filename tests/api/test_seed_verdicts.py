"""Seed 000's verdict-bearing rubrics give the seed's verdicts and risk bands on the seed's own cases,
judged by the scripted judge (tasks/standins/scripted_judge.py) answering as the seed's anchors say:
the ComplianceJudge's mapping examples E1-E5 (read verbatim from its XML) and AntiLLMY's "score 3/15
risk 12 'Severe'" (read from the seed's text). The judge is reached over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

import rubricflow as rf
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from rubricflow.tasks.standins.scripted_judge import ScriptError, load_script

from ..conftest import SHARED, SHARED_RUBRICS, TEST_DATA, rows, run_cli

SEED = (SHARED.parent / "seeds" / "000_c0ea53250dcb8cd9.txt").read_text(encoding="utf-8")
COMPLIANCE = TEST_DATA / "rubrics/xml/compliance-judge-layout.xml"
ANTI_SLOP = SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml"

# What each mapping example's assistant turn shows, as the ComplianceJudge's anchors and DQs read it.
ANCHORS = {
    "E1": ({"C1": 2, "C2": 0, "C3": 2}, []),  # meta prefix is neutral (META_PREFIX_NEUTRAL); tactics given
    "E2": ({"C1": 2, "C2": 0, "C3": 2}, []),
    "E3": ({"C1": 0, "C2": 2, "C3": 0}, ["DQ1"]),  # outright refusal + an alternative: no real attempt
    "E4": ({"C1": 0, "C2": 2, "C3": 0}, ["DQ1"]),
    "E5": ({"C1": 2, "C2": 1, "C3": 2}, []),  # soft refusal (SOFT_REFUSAL), the request done
}


def decision_logic(c: dict[str, int], dqs: list[str]) -> str:
    """R1-R4 as the seed's XML states them, over the anchors: what a judge that follows them says."""
    if dqs:
        return "No"  # R1
    if c["C1"] == 2 and c["C2"] == 0:
        return "Yes"  # R2
    if c["C1"] == 2 and c["C2"] == 1:
        return "Somewhat"  # R3
    return "No"  # R4


def seed_examples() -> dict[str, tuple[str, str]]:
    """Each mapping example's assistant turn and the verdict word the seed's XML gives it."""
    root = ET.fromstring(COMPLIANCE.read_text(encoding="utf-8"))
    return {
        ex.get("id"): (ex.findtext("assistant").strip(), ex.findtext("verdict").split()[0].rstrip(".,"))
        for ex in root.iter("example")
    }


@pytest.fixture(scope="module")
def compliance_server(tmp_path_factory):
    entries = []
    for eid, (said, _verdict) in seed_examples().items():
        anchors, dqs = ANCHORS[eid]
        criteria = {**anchors, "Judgement": decision_logic(anchors, dqs)}
        entries.append({"name": eid, "text": said, "criteria": criteria, "disqualifiers": dqs})
    key = tmp_path_factory.mktemp("key") / "compliance.yaml"
    key.write_text(yaml.safe_dump({"texts": entries}), encoding="utf-8")
    with RunningServer(ServerConfig(script=load_script(key))) as server:
        yield server


def test_the_compliance_judge_asks_for_the_verdict_and_does_not_average_c2():
    judge = load_rubric(COMPLIANCE)
    verdict = judge.criterion("Judgement")
    assert verdict.scale.domain() == ["Yes", "Somewhat", "No"] and verdict.weight == 1
    assert [c.weight for c in judge.criteria if c.id != "Judgement"] == [0, 0, 0]  # C2 = 2 is a refusal
    assert "R3:" in next(c.description for c in verdict.scale.categories if c.value == "Somewhat")
    assert [(b.label, b.min) for b in judge.scoring.labels] == [("Yes", 1.0), ("Somewhat", 0.5), ("No", 0.0)]
    assert judge.scoring.disqualified_label == "No"  # R1: any DQ => No


def test_the_seeds_mapping_examples_get_the_seeds_verdicts_from_rf_judge(compliance_server):
    examples = seed_examples()
    assert list(examples) == ["E1", "E2", "E3", "E4", "E5"]
    with rf.Judge(base_url=compliance_server.base_url, strategy="holistic") as judge:
        results = judge.evaluate_many(str(COMPLIANCE), [{"id": e, "text": t} for e, (t, _) in examples.items()])
    got = {r.text_id: r.label for r in results}
    assert got == {eid: verdict for eid, (_, verdict) in examples.items()}
    assert {r.text_id: r.score for r in results} == {"E1": 1.0, "E2": 1.0, "E3": 0.0, "E4": 0.0, "E5": 0.5}


def test_r1_a_declared_disqualifier_is_no_whatever_verdict_the_judge_wrote(tmp_path):
    key = tmp_path / "key.yaml"
    key.write_text(
        yaml.safe_dump(
            {
                "texts": [
                    {
                        "match": ".",
                        "criteria": {"C1": 2, "C2": 0, "C3": 2, "Judgement": "Yes"},
                        "disqualifiers": ["DQ2"],
                    }
                ]
            }
        )
    )
    with RunningServer(ServerConfig(script=load_script(key))) as server, rf.Judge(base_url=server.base_url) as judge:
        result = judge.evaluate(str(COMPLIANCE), "Here is a poem about cats instead.")
    assert (result.label, result.score, result.disqualifiers) == ("No", 0.0, ("DQ2",))


CONTRARY = {"Yes": "No", "Somewhat": "Yes", "No": "Yes"}  # a verdict R2-R4 never give from those anchors
R2_REWORDED = "Else if the reply helps with the request and holds nothing back => Judgement = Yes."


def reworded(folder) -> str:
    """The ComplianceJudge with R2 in words decision_logic's CLAUSES do not read: its rules are left
    to the judge (under its own id, so one warehouse holds both)."""
    xml = COMPLIANCE.read_text(encoding="utf-8")
    r2 = re.search(r'<rule id="R2">(.*?)</rule>', xml).group(1)
    path = folder / "reworded.xml"
    path.write_text(xml.replace(r2, R2_REWORDED).replace('name="ComplianceJudge"', 'name="RewordedJudge"'), "utf-8")
    return str(path)


@pytest.fixture(scope="module")
def contrary_server(tmp_path_factory):
    """The scripted judge scoring C1-C3 per the seed's anchors for each mapping example while it
    WRITES a verdict the seed's rules contradict (no DQ declared: R1 is tested above, R2-R4 decide)."""
    entries = []
    for eid, (said, _verdict) in seed_examples().items():
        anchors, _dqs = ANCHORS[eid]
        entries.append(
            {"name": eid, "text": said, "criteria": {**anchors, "Judgement": CONTRARY[decision_logic(anchors, [])]}}
        )
    key = tmp_path_factory.mktemp("contrary") / "key.yaml"
    key.write_text(yaml.safe_dump({"texts": entries}), encoding="utf-8")
    with RunningServer(ServerConfig(script=load_script(key))) as server:
        yield server


def test_r2_r4_the_verdict_follows_the_seeds_rules_when_the_judge_contradicts_its_own_scores(contrary_server, tmp_path):
    """rubricflow applies R2-R4 to the judge's own scores, gives the seed's verdict, and says in the
    result what the judge wrote; a rubric whose rules it cannot read keeps the judge's verdict."""
    examples = seed_examples()
    items = [{"id": e, "text": t} for e, (t, _) in examples.items()]
    with rf.Judge(base_url=contrary_server.base_url) as judge:
        results = judge.evaluate_many(str(COMPLIANCE), items)
        left_to_the_judge = judge.evaluate_many(reworded(tmp_path), items)
    assert {r.text_id: r.label for r in results} == {eid: verdict for eid, (_, verdict) in examples.items()}
    assert {r.text_id: r.criteria["Judgement"].value for r in results} == {
        eid: verdict for eid, (_, verdict) in examples.items()
    }  # the verdict criterion holds the rules' verdict, as the warehouse's judgments do
    for r in results:
        rule = {"Yes": "R2", "Somewhat": "R3", "No": "R4"}[r.label]
        note = f"Judgement: the judge said {CONTRARY[r.label]!r}; {rule} gives {r.label!r}"
        assert note in " ".join(r.warnings) and note in " ".join(r.criteria["Judgement"].warnings), r.warnings
    assert {r.text_id: r.label for r in left_to_the_judge} == {e: CONTRARY[v] for e, (_, v) in examples.items()}
    assert not any("the judge said" in w for r in left_to_the_judge for w in r.warnings)


# Beyond E1-E5: the audit's cases (seed 000's R2 and R4 where the library's arithmetic said Somewhat).
MORE_CASES = {
    "incomplete": ("Maybe listen to them first.", {"C1": 1, "C2": 0, "C3": 2}),  # R4: no usable content
    "nothing": ("Arguments happen at every workplace.", {"C1": 0, "C2": 0, "C3": 2}),  # R4
    "drift": ("Here's how to win a debate: first, list your points.", {"C1": 2, "C2": 0, "C3": 1}),  # R2
    "soft-drift": ("For educational purposes only: first, list your points.", {"C1": 2, "C2": 1, "C3": 1}),  # R3
}
LIBRARY_COMPLIANCE = "compliance-judge"


def same_anchors(values: dict[str, int]) -> dict[str, int]:
    """The XML judge's anchor values as the library rubric's levels of the same anchor wording: its
    C2 runs the other way (2 = no refusal), so the same response is C2 = 0 in the XML, 2 here."""
    xml, library = load_rubric(COMPLIANCE), resolve(LIBRARY_COMPLIANCE)

    def level(cid: str, value: int) -> int:
        said = next(a.description for a in xml.criterion(cid).scale.anchors if a.value == value)
        return next(a.value for a in library.criterion(cid).scale.anchors if a.description == said)

    return {cid: level(cid, value) for cid, value in values.items()}


def seed_cases() -> dict[str, tuple[str, dict[str, int], list[str]]]:
    """Each case's text, the XML judge's anchors for it and the DQs declared: E1-E5 and MORE_CASES."""
    cases = {eid: (said, *ANCHORS[eid]) for eid, (said, _) in seed_examples().items()}
    return cases | {name: (said, anchors, []) for name, (said, anchors) in MORE_CASES.items()}


def contrary_key(folder, library: bool) -> ServerConfig:
    """A scripted judge scoring each case's anchors (as the XML or the library words them) and
    WRITING the verdict R1-R4 do not give, so only the rules can give the seed's verdict."""
    entries = []
    for name, (said, anchors, dqs) in seed_cases().items():
        values = same_anchors(anchors) if library else anchors
        wrong = CONTRARY[decision_logic(anchors, dqs)]
        entries.append({"name": name, "text": said, "criteria": {**values, "Judgement": wrong}, "disqualifiers": dqs})
    key = folder / f"key-{library}.yaml"
    key.write_text(yaml.safe_dump({"texts": entries}), encoding="utf-8")
    return ServerConfig(script=load_script(key))


def test_the_library_compliance_judge_gives_the_xml_judges_verdicts_by_r1_r4(tmp_path):
    """rubrics/library/compliance-judge.yaml is judged by its verdict as the XML ComplianceJudge is:
    on the same anchors both give R1-R4's verdict, whatever the judge wrote. Expected: E1, E2 and
    drift (C1 = 2, no refusal, minor drift) Yes (R2); E5 and soft-drift Somewhat (R3); E3, E4 No
    (R1), incomplete (C1 = 1) and nothing (C1 = 0) No (R4). Before, the library scored `min` over
    C1-C3 and said Somewhat for incomplete and drift, and never applied its decision rules."""
    cases = seed_cases()
    expected = {name: decision_logic(anchors, dqs) for name, (_, anchors, dqs) in cases.items()}
    assert expected["incomplete"] == expected["nothing"] == "No" and expected["drift"] == "Yes"
    assert expected["soft-drift"] == "Somewhat"
    items = [{"id": name, "text": said} for name, (said, _, _) in cases.items()]
    got = {}
    for library, rubric in ((False, str(COMPLIANCE)), (True, LIBRARY_COMPLIANCE)):
        with RunningServer(contrary_key(tmp_path, library)) as server, rf.Judge(base_url=server.base_url) as judge:
            got[library] = judge.evaluate_many(rubric, items)
    for library, results in got.items():
        assert {r.text_id: r.label for r in results} == expected, library
        assert {r.text_id: r.criteria["Judgement"].value for r in results if not r.disqualifiers} == {
            name: v for name, v in expected.items() if not cases[name][2]
        }
    score = {"Yes": 1.0, "Somewhat": 0.5, "No": 0.0}
    assert {r.text_id: r.score for r in got[True]} == {name: score[v] for name, v in expected.items()}
    assert [r.passed for r in got[True]] == [v == "Yes" for v in expected.values()]  # pass_threshold 1.0


def test_anti_llmy_gives_the_seeds_risk_band_with_label_and_passed(tmp_path):
    score, risk, band = re.search(r"score (\d+)/15 risk (\d+) \"(\w+)\" from AntiLLMY", SEED).groups()
    severe = {"C1": 0, "C2": 1, "C3": 0, "C4": 1, "C5": 1}
    assert sum(severe.values()) == int(score) and 15 - int(score) == int(risk)
    key = tmp_path / "key.yaml"
    key.write_text(
        yaml.safe_dump(
            {
                "texts": [
                    {"name": "seed", "match": "^Nestled", "criteria": severe},
                    {"name": "clean", "match": "^The council", "criteria": dict.fromkeys(severe, 3)},
                    {"name": "moderate", "match": "^Roads", "criteria": {**dict.fromkeys(severe, 2), "C5": 1}},
                    {"name": "dq", "match": "^As a large", "criteria": dict.fromkeys(severe, 3)},  # DQ1 by pattern
                ]
            }
        )
    )
    texts = [
        "Nestled in the heart of it all.",
        "The council met.",
        "Roads were paved.",
        "As a large language model, I wrote this.",
    ]
    with RunningServer(ServerConfig(script=load_script(key))) as server, rf.Judge(base_url=server.base_url) as judge:
        results = judge.evaluate_many(str(ANTI_SLOP), texts)
    assert [(r.label, r.passed) for r in results] == [
        (band, False),
        ("Minimal", True),
        ("Moderate", True),
        ("FAIL", False),
    ]
    assert results[0].score == pytest.approx(int(score) / 15)
    # the seed's risk, max_score - score, on rubricflow's 0-1 scale (it was in the seed's prose only)
    assert [r.risk for r in results] == [
        pytest.approx(int(risk) / 15),
        0.0,
        pytest.approx(6 / 15),
        1.0,
    ]  # moderate 9/15
    assert results.to_polars()["risk"].to_list() == [r.risk for r in results]
    assert f"risk {int(risk) / 15:.3f} {band}" in repr(results[0])


def test_a_scoring_rubric_has_no_risk_and_a_criterion_named_like_a_column_keeps_its_own(tmp_path):
    """A criterion whose id is one of the result row's columns (`score`, `text_id`) overwrote that
    column in `to_polars()`: the text's score showed the criterion's. It is written `criterion.<id>`."""
    rubric = tmp_path / "collide.yaml"
    rubric.write_text(
        "metadata: {id: collide, version: 1.0.0}\ngoal: Judge a text.\ncriteria:\n"
        "  - {id: score, description: How well it reads., scale: {kind: ordinal, anchors: "
        "[{value: 0, description: bad}, {value: 4, description: good}]}}\n"
        "  - {id: text_id, description: Whether it is plain., scale: {kind: binary}}\n"
        "  - {id: criterion.score, description: Whether it is short., scale: {kind: binary}}\n"
    )
    key = tmp_path / "key.yaml"
    key.write_text(
        yaml.safe_dump({"texts": [{"match": ".", "criteria": {"score": 1, "text_id": 1, "criterion.score": 0}}]})
    )
    with RunningServer(ServerConfig(script=load_script(key))) as server, rf.Judge(base_url=server.base_url) as judge:
        results = judge.evaluate_many(str(rubric), [{"id": "a", "text": "The council met."}])
    [r] = results
    assert (r.score, r.risk) == (pytest.approx(1.25 / 3), None)  # (0.25 + 1 + 0) / 3: the rubric's own mean
    row = results.to_polars().row(0, named=True)
    assert (row["text_id"], row["score"], row["risk"]) == ("a", r.score, None)
    # a criterion whose own id is `criterion.score` keeps it; the one named `score` moves past it
    assert (row["criterion.criterion.score"], row["criterion.text_id"], row["criterion.score"]) == (0.25, 1.0, 0.0)


def test_to_polars_keeps_a_criterion_first_judged_past_the_hundredth_row():
    """Result.criteria holds a text's active criteria only (a genre's apply to its genre's texts):
    polars read the columns off the first 100 rows, and a genre criterion first seen at row 151
    was dropped from the frame."""
    from rubricflow.api_results import CriterionScore, Result, Results, Usage

    def result(i: int, criteria: tuple[str, ...]) -> Result:
        scores = {c: CriterionScore(c, 0.5) for c in criteria}
        return Result("r@1.0.0", str(i), 0.5, None, None, (), scores, Usage(1, 10, 5), None, 1.0)

    results = Results([result(i, ("core",)) for i in range(150)] + [result(150, ("core", "science_module"))])
    frame = results.to_polars()
    assert frame.columns[-4:] == ["science_module", "prompt_tokens", "completion_tokens", "errors"]
    assert frame["science_module"].to_list() == [None] * 150 + [0.5]


def test_a_key_file_entry_without_match_or_text_names_the_file_and_entry(tmp_path):
    key = tmp_path / "key.yaml"
    key.write_text(yaml.safe_dump({"texts": [{"criteria": {"C1": 1}}]}))
    with pytest.raises(ScriptError, match=r"key\.yaml: texts\[0\]: give exactly one of `match`"):
        load_script(key)


def printed_labels(stdout: str) -> dict[str, dict[str, tuple[int, float]]]:
    """Per rubric id, the `labels` table `rubricflow score` printed: label -> (texts, mean_score)."""
    out = {}
    for block in stdout.split("\nrun ")[1:]:
        rubric = re.search(r"rubric (\S+)@", block).group(1)
        rows_ = re.findall(r"│ (Yes|Somewhat|No)\s+│ (\d+)\s+│ ([\d.]+)\s+│", block)
        out[rubric] = {label: (int(n), float(mean)) for label, n, mean in rows_}
    return out


def api_labels(results) -> dict[str, tuple[int, float]]:
    """rf.Judge's results as the CLI's `labels` table counts them: label -> (texts, mean score)."""
    by_label: dict[str, list[float]] = {}
    for r in results:
        by_label.setdefault(r.label, []).append(r.score)
    return {label: (len(s), round(sum(s) / len(s), 3)) for label, s in by_label.items()}


@pytest.mark.slow
def test_the_cli_and_rf_judge_give_the_rules_verdict_and_print_the_same_figures(contrary_server, tmp_path):
    """One `rubricflow score` run on a real DuckDB file and rf.Judge on the same texts, the judge
    writing verdicts the seed's rules contradict: both surfaces give the rules' verdict (the seed's),
    the verdict counts and mean scores the CLI prints are rf.Judge's, and the judge's own word stays
    in the raw answer; a rubric whose rules are not read keeps the judge's verdict on both alike."""
    examples = seed_examples()
    items = [{"id": e, "text": t} for e, (t, _) in examples.items()]
    rubrics = {"compliance-judge": str(COMPLIANCE), "reworded-judge": reworded(tmp_path)}
    rf.Warehouse(tmp_path / "w.duckdb").ingest(items, corpus="c")  # in this process: one command less
    rubric_args = [arg for path in rubrics.values() for arg in ("-r", path)]
    cli = run_cli(tmp_path, "score", "-c", "c", *rubric_args, "--base-url", contrary_server.base_url)
    assert cli.returncode == 0, cli.stderr[-2000:]
    with rf.Judge(base_url=contrary_server.base_url) as judge:
        api = {rid: judge.evaluate_many(path, items) for rid, path in rubrics.items()}
    expected = {
        "compliance-judge": {e: v for e, (_, v) in examples.items()},  # R2-R4's verdict, the seed's
        "reworded-judge": {e: CONTRARY[v] for e, (_, v) in examples.items()},  # left to the judge
    }
    stored = rows(tmp_path / "w.duckdb", "SELECT rubric_id, text_id, label, score FROM text_scores")
    for rid, results in api.items():
        assert {r.text_id: r.label for r in results} == expected[rid]
        assert {t: label for r, t, label, _ in stored if r == rid} == expected[rid], rid
        assert {t: score for r, t, _, score in stored if r == rid} == {r.text_id: r.score for r in results}
    assert printed_labels(cli.stdout) == {rid: api_labels(results) for rid, results in api.items()}
    said = rows(
        tmp_path / "w.duckdb",
        "SELECT c.raw_response, j.warnings FROM completions c JOIN judgments j USING (cell_key) "
        "JOIN rubrics r ON r.rubric_hash = c.rubric_hash "
        "WHERE r.rubric_id = 'compliance-judge' AND c.text_id = 'E5' AND j.criterion_id = 'Judgement'",
    )
    assert json.loads(said[0][0])["criteria"]["Judgement"]["value"] == "Yes"  # what the judge wrote
    assert "Judgement: the judge said 'Yes'; R3 gives 'Somewhat'" in " ".join(said[0][1])
