"""A scoring run plans its prompts' cache layout (tasks/judging/layout_plan.py) and records it with
the prompt tokens it sent, those a prefix cache served and the least its judgments needed; the
offline judge's simulated prefix cache (tasks/standins/prefix_cache.py) is the cache measured."""

import json

from rubricflow.api_warehouse import Warehouse
from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from tests.conftest import rows

PARAGRAPH = "The council met on day {i} and approved the road budget by seven votes to two after a long debate. "


def _corpus(path, name: str, n: int = 6):
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):  # ~4,000 tokens each
            fh.write(json.dumps({"id": f"{name}{i}", "text": PARAGRAPH.format(i=f"{name}{i}") * 160}) + "\n")
    return str(path)


def test_long_texts_are_laid_out_text_first_and_the_run_records_what_the_cache_saved(tmp_path):
    """Six 4k-token texts x 3 criteria: auto picks text-first and says why; its prompts are mostly
    served from the cache, close to the minimum; the same work forced rubric-first pays each text
    three times. `runs` shows both."""
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(_corpus(tmp_path / "a.jsonl", "a"), warehouse, "a")
    ingest_flow(_corpus(tmp_path / "b.jsonl", "b"), warehouse, "b")
    with RunningServer(ServerConfig()) as server:
        judge = {"base_url": server.base_url, "strategy": "per_criterion", "max_in_flight": 4}
        planned = score_corpus("a", "llm-slop", warehouse, judge)
        forced = score_corpus("b", "llm-slop", warehouse, judge, options={"layout": "rubric-first"})
    (layout, reason), _ = rows(warehouse, "SELECT layout, layout_reason FROM runs ORDER BY started_at")
    assert layout == "text-first" and reason.startswith("auto: 6 texts of ~3,950 tokens, 3 call units")
    runs = {r["run_id"]: r for r in Warehouse(warehouse).runs().to_dicts()}
    text_first, rubric_first = runs[planned["run_id"]], runs[forced["run_id"]]
    assert rubric_first["layout"] == "rubric-first" and rubric_first["prompt_minimum"] == text_first["prompt_minimum"]
    uncached = text_first["prompt_sent"] - text_first["prompt_cached"]
    assert text_first["prompt_cached"] / text_first["prompt_sent"] > 0.5
    assert uncached <= 1.15 * text_first["prompt_minimum"]
    assert rubric_first["prompt_sent"] - rubric_first["prompt_cached"] > 2 * uncached
