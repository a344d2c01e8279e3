"""The nightly flow end to end: incremental nights, the canary, night-over-night comparison, and
a loud failure when coverage drops."""

import json

import pytest

from rubricflow.flows.nightly import CoverageError, nightly_scoring
from tests.conftest import ROOT, ThreadServer, rows, write_corpus
from tests.prefect_events import wait_for_event


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nightly")
    server = ThreadServer()
    try:
        source = write_corpus(tmp / "corpus.jsonl", 30)
        warehouse = str(tmp / "w.duckdb")
        judge = {"base_url": server.base_url}
        calls = []

        def night(name, **kw):
            before = server.stats()["requests"]
            result = nightly_scoring(
                str(source), CORPUS, ["llm-slop"], warehouse, judge, canary_size=5, night=name, **kw
            )
            calls.append(server.stats()["requests"] - before)
            return result

        first = night("2026-11-01")
        second = night("2026-11-02")  # nothing changed
        lines = source.read_text().splitlines()
        changed = [
            json.dumps({"id": "t0001", "text": "The council met again and cut the road budget by a third."}),
            json.dumps({"id": "t0002", "text": "Nestled in the heart of town, a vibrant tapestry plays a vital role."}),
        ]
        new = [
            json.dumps({"id": f"new{i}", "text": f"A new report number {i} lists the costs in plain words."})
            for i in range(3)
        ]
        source.write_text("\n".join(lines[:1] + changed + lines[3:] + new) + "\n")
        third = night("2026-11-03")
        yield {
            "first": first,
            "second": second,
            "third": third,
            "calls": calls,
            "warehouse": warehouse,
            "server": server,
            "source": source,
            "judge": judge,
        }
    finally:
        server.stop()


def events_named(name: str, resource_id: str) -> list:
    from prefect.client.orchestration import get_client
    from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter

    wanted = EventFilter(event=EventNameFilter(name=[name]), resource=EventResourceFilter(id=[resource_id]))
    with get_client(sync_client=True) as client:
        return client.read_events(filter=wanted, limit=5).events


# a name no other test gives its corpus: the Prefect server's events are shared by the whole suite
CORPUS = "nightly-news"
CANARY = 2 + 5  # the rubric's goldens + the fixed sample


def test_first_night_judges_everything_plus_the_canary(nights):
    (first,) = nights["first"]
    assert nights["calls"][0] == 30 + CANARY
    assert first["texts"] == 30 and first["coverage"] == 1.0 and first["prev_night"] is None
    assert first["judged_cells"] == 30 and first["error_rate"] == 0


def test_a_no_change_night_makes_no_corpus_calls(nights):
    (second,) = nights["second"]
    assert nights["calls"][1] == CANARY  # only the canary is judged again
    assert second["judged_cells"] == 0 and second["calls"] == 0
    assert second["prev_night"] == "2026-11-01" and second["score_shift"] == pytest.approx(0.0)
    assert second["canary_texts_compared"] == CANARY and second["canary_drift"] == pytest.approx(0.0)
    # the source was not even re-ingested: its digest is unchanged
    assert rows(nights["warehouse"], "SELECT count(*) FROM corpora WHERE corpus_id = ?", [CORPUS]) == [(1,)]


def test_only_changed_and_new_texts_are_judged(nights):
    (third,) = nights["third"]
    assert third["judged_cells"] == 2 + 3
    assert nights["calls"][2] == 5 + CANARY
    assert third["texts"] == 33 and third["score_shift"] != 0  # a slop text replaced a clean one and vice versa
    recorded = rows(nights["warehouse"], "SELECT night, judged_cells FROM nights ORDER BY night")
    assert recorded == [("2026-11-01", 30), ("2026-11-02", 0), ("2026-11-03", 5)]


def test_coverage_under_the_threshold_fails_loudly(nights, tmp_path):
    refusing = ThreadServer(fault_rate=1, faults=("refusal",), fault_attempts=99)
    try:
        with pytest.raises(CoverageError, match=r"writing-quality .*coverage 0\.0% < 95\.0%"):
            nightly_scoring(
                str(nights["source"]),
                CORPUS,
                ["writing-quality"],
                nights["warehouse"],
                {"base_url": refusing.base_url},
                canary_size=0,
                night="2026-11-04",
            )
    finally:
        refusing.stop()
    # the night was recorded before the failure, with its errors
    assert rows(nights["warehouse"], "SELECT coverage, failed_cells FROM nights WHERE night = '2026-11-04'") == [
        (0.0, 33)
    ]
    event = wait_for_event("rubricflow.coverage.dropped", f"rubricflow.corpus.{CORPUS}")  # what an automation reads
    assert event.payload["night"] == "2026-11-04" and event.payload["rubric"].startswith("writing-quality ")
    assert event.payload["coverage"] == 0.0 and event.payload["min_coverage"] == 0.95
    assert event.payload["failed_cells"] == 33 and event.related[0].role == "run"
    # the nights' own ingests (emitted before this event) announce nothing: deploy/prefect.yaml's
    # score-on-ingest would score the corpus a second time
    assert not events_named("rubricflow.corpus.ingested", f"rubricflow.corpus.{CORPUS}")


def test_a_canary_that_moved_is_announced_as_drift(nights):
    """Another judge on the same canary texts (the offline judge's persona of another model name):
    the night's drift is over the threshold, and the `rubricflow.drift.detected` event carries it."""
    judge = nights["judge"] | {"model": "another-judge"}
    (night,) = nightly_scoring(
        str(nights["source"]),
        CORPUS,
        ["llm-slop"],
        nights["warehouse"],
        judge,
        canary_size=5,
        night="2026-11-05",
        max_canary_drift=0.01,
    )
    assert night["prev_night"] == "2026-11-03" and night["canary_drift"] > 0.01
    event = wait_for_event("rubricflow.drift.detected", f"rubricflow.corpus.{CORPUS}")
    assert event.payload["night"] == "2026-11-05" and event.payload["max_canary_drift"] == 0.01
    assert event.payload["canary_drift"] == pytest.approx(night["canary_drift"])
    assert event.payload["canary_texts_compared"] == CANARY


def test_each_rubric_of_a_night_has_its_own_canary(nights, tmp_path):
    """docs/operations.md's night: helpfulness's goldens carry no context, and groundedness (context
    required) refused the canary corpus it shared with them. Each rubric's canary holds its own goldens."""
    warehouse, source = str(tmp_path / "w.duckdb"), tmp_path / "replies.jsonl"
    source.write_text("".join((ROOT / "examples" / "replies.jsonl").read_text().splitlines(keepends=True)[:3]))
    night = "2026-11-06"
    done = nightly_scoring(
        str(source), "r", ["helpfulness", "groundedness"], warehouse, nights["judge"], canary_size=2, night=night
    )
    assert [n["rubric"].split()[0] for n in done] == ["helpfulness", "groundedness"]
    canaries = rows(warehouse, "SELECT canary_corpus FROM nights ORDER BY rubric_id")
    assert canaries == [(f"r--canary-{night}--groundedness",), (f"r--canary-{night}--helpfulness",)]
    canary = f"r--canary-{night}--groundedness"
    goldens = rows(warehouse, f"SELECT text_id FROM texts WHERE corpus_id = '{canary}' AND text_id LIKE '%:golden:%'")
    assert sorted(goldens) == [(f"{night}:golden:grounded-answer",), (f"{night}:golden:invented-facts",)]


def test_a_deployed_night_with_a_missing_source_is_one_line_naming_it(tmp_path):
    """#41: a night run by a Prefect deployment whose source file is gone raised a FileNotFoundError traceback."""
    from rubricflow.errors import InputError

    gone = tmp_path / "moved-away.jsonl"
    with pytest.raises(InputError, match="moved-away.jsonl: the night's source is missing"):
        nightly_scoring(str(gone), "n", ["llm-slop"], str(tmp_path / "w.duckdb"), {"base_url": "http://127.0.0.1:9/v1"})
    assert not (tmp_path / "w.duckdb").exists()  # nothing was written
