"""The Python API from every context a user calls it from, in one process each: a script, then
`asyncio.run` (a web handler, a notebook's loop), then two threads one after the other, then three
at once (two of them the same work: the second waits for the first, #50 item 13); and a Jupyter
kernel's cells (nbclient + ipykernel). Prefect's settings were entered as a process-wide context in
the first and closed in the next: `ValueError: <Token var=<ContextVar name='settings'>> was created
in a different Context`."""

import subprocess
import sys

import pytest

from tests.conftest import rows

pytestmark = pytest.mark.slow

WORK = """
import asyncio, threading, rubricflow as rf
wh, judge = rf.Warehouse("w.duckdb"), rf.Judge(base_url=%r)
texts = [{"id": "a", "text": "The council met on Tuesday."}, {"id": "b", "text": "Moreover, it rained."}]
def score(label):
    print(label, wh.score("c", "llm-slop", judge).status, flush=True)
"""
SCRIPT = """
wh.ingest(texts, corpus="c")
score("script")
async def handler():
    score("in-asyncio-run")
asyncio.run(handler())
for label in ("thread-1", "thread-2"):  # one after the other
    thread = threading.Thread(target=score, args=(label,))
    thread.start()
    thread.join()
wh.ingest(texts, corpus="c2")
def score_at_once(label, corpus, rubric):
    print(label, wh.score(corpus, rubric, judge).status, flush=True)
at_once = [threading.Thread(target=score_at_once, args=a) for a in  # #50 item 13: three at once
           [("same-1", "c", "writing-quality"), ("same-2", "c", "writing-quality"), ("other", "c2", "llm-slop")]]
[t.start() for t in at_once]
[t.join() for t in at_once]
"""
CELLS = ['score("cell-1")', 'wh.ingest(texts, corpus="c")\nscore("cell-2")',
         'await asyncio.to_thread(score, "cell-in-a-thread")']  # fmt: skip


def test_a_script_asyncio_run_threads_and_then_a_kernels_cells_call_the_api(thread_judge_server, tmp_path):
    url = thread_judge_server().base_url
    code = WORK % url + SCRIPT
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout.split("\n")
    assert printed[:4] == [f"{c} completed" for c in ("script", "in-asyncio-run", "thread-1", "thread-2")]
    assert sorted(printed[4:7]) == ["other completed", "same-1 completed", "same-2 completed"], done.stderr[-3000:]
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM runs WHERE status = 'completed'") == [(7,)]
    # the two threads of the same work: one judged, the other waited and found it landed; nothing twice
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) - count(DISTINCT cell_key) FROM completions") == [(0,)]
    assert rows(tmp_path / "w.duckdb", "SELECT count(DISTINCT corpus_id) FROM completions") == [(2,)]
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [nbformat.v4.new_code_cell(WORK % url)]
    notebook = nbformat.v4.new_notebook(cells=cells + [nbformat.v4.new_code_cell(c) for c in CELLS])
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})  # fmt: skip
    client.execute()  # raises CellExecutionError naming the cell that failed
    printed = "".join(o.get("text", "") for c in notebook.cells for o in c.get("outputs", []))
    assert printed.split() == [w for c in ("cell-1", "cell-2", "cell-in-a-thread") for w in (c, "completed")]
