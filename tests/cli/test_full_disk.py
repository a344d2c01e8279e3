"""#41 G14 on a real full disk: the warehouse on a small tmpfs of its own (a private mount namespace,
`unshare -rm`), filled for real while `rubricflow score` is judging. The run says one line naming the
file it could not write and exits non-zero; what landed before stays; after space is freed the next
run judges the rest and buys no answer twice."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import EXE, ThreadServer

TEXTS = 40

SCRIPT = r"""
set -u
mount -t tmpfs -o size=64m tmpfs "$DISK" || exit 90
cp "$OUTSIDE/w.duckdb" "$DISK/w.duckdb"
cd "$DISK"
score() { "$EXE" score -c c -r llm-slop -w w.duckdb --base-url "$URL" --shard-size 10 --max-in-flight 2 ${MORE:-}; }
score > "$OUTSIDE/first.out" 2> "$OUTSIDE/first.err" &
first=$!
while [ ! -e "$OUTSIDE/fill" ]; do sleep 0.05; done
dd if=/dev/zero of="$DISK/filler" bs=64k 2> /dev/null
touch "$OUTSIDE/filled"
wait $first; echo $? > "$OUTSIDE/first.rc"
rm "$DISK/filler"
score > "$OUTSIDE/second.out" 2> "$OUTSIDE/second.err"; echo $? > "$OUTSIDE/second.rc"
cp w.duckdb "$OUTSIDE/after.duckdb"
"""


def private_tmpfs_works(where: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=1m tmpfs {where} && touch {where}/x"],
        capture_output=True,
    )
    return probe.returncode == 0


def fill_the_disk_while_scoring(tmp_path: Path, script: str, answered: int, **env: str) -> tuple[dict, str]:
    """Run `script` (its first `score` in the background) in a private namespace with the warehouse on
    a tmpfs; once the judge has answered `answered` calls, let it fill the disk. Returns the
    judge's counts and the first run's stderr, after checking that it ended in one full-disk line and the next run in 0."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not private_tmpfs_works(disk):
        pytest.skip("no private mount namespace here (unshare -rm): a real full disk needs one")
    (tmp_path / "c.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i:02d}", "text": f"The council met on day {i}."}) + "\n" for i in range(TEXTS))
    )
    ingest = [EXE, "ingest", str(tmp_path / "c.jsonl"), "-c", "c", "-w", str(tmp_path / "w.duckdb")]
    assert subprocess.run(ingest, capture_output=True).returncode == 0
    server = ThreadServer(latency_ms=300)  # ~4 s of judging left when the fill begins: it lands mid-run
    env = {**os.environ, "DISK": str(disk), "OUTSIDE": str(tmp_path), "EXE": EXE, "URL": server.base_url, **env}
    env["COLUMNS"] = "300"
    process = subprocess.Popen(["unshare", "-rm", "sh", "-c", script], env=env)
    try:
        deadline = time.monotonic() + 240
        while server.stats()["answered"] < answered:
            assert process.poll() is None and time.monotonic() < deadline, "the first run ended before the disk filled"
            time.sleep(0.05)
        (tmp_path / "fill").touch()
        assert process.wait(timeout=400) == 0
        stats = server.stats()
    finally:
        if process.poll() is None:
            process.kill()
        server.stop()
    first_err = (tmp_path / "first.err").read_text()
    said = [line for line in first_err.splitlines() if line.startswith("error:")]  # beside the progress lines
    assert (tmp_path / "first.rc").read_text().strip() == "2", first_err
    assert len(said) == 1 and "the disk is full" in said[0] and f"{disk}/" in said[0], first_err
    assert (tmp_path / "second.rc").read_text().strip() == "0", (tmp_path / "second.err").read_text()
    return stats, first_err


@pytest.mark.slow
def test_a_run_that_fills_the_disk_keeps_what_landed_and_the_next_buys_nothing_twice(tmp_path):
    # a shard or more landed (12 answers): now the disk fills, for real
    stats, first_err = fill_the_disk_while_scoring(tmp_path, SCRIPT, 12)
    assert "Traceback" not in first_err and "| ERROR" not in first_err  # no Prefect record before it
    with duckdb.connect(str(tmp_path / "after.duckdb"), read_only=True) as con:
        ok = con.execute("SELECT count(*) FROM completions WHERE status = 'ok'").fetchone()[0]
        statuses = con.execute("SELECT status FROM runs ORDER BY started_at").fetchall()
    # the first run's row could not be written either: the next run closed it and loaded its parts
    assert ok == TEXTS and statuses[0][0] in ("failed", "interrupted") and statuses[1] == ("completed",)
    assert stats["repeats_after_an_answer"] == 0 and stats["answered"] == TEXTS  # no answer bought twice


KEEPS_FULL = r"""
set -u
mount -t tmpfs -o size=64m tmpfs "$DISK" || exit 90
cp "$OUTSIDE/w.duckdb" "$DISK/w.duckdb"
cd "$DISK"
score() { "$EXE" score -c c -r llm-slop -w w.duckdb --base-url "$URL" --shard-size 100 --max-in-flight 2; }
score > "$OUTSIDE/first.out" 2> "$OUTSIDE/first.err" &
first=$!
while [ ! -e "$OUTSIDE/fill" ]; do sleep 0.05; done
"$PY" -c "$FILLER" &
filler=$!
while [ ! -e "$OUTSIDE/filled" ]; do sleep 0.01; done
wait $first; echo $? > "$OUTSIDE/first.rc"
wait $filler
rm "$DISK/filler"
score > "$OUTSIDE/second.out" 2> "$OUTSIDE/second.err"; echo $? > "$OUTSIDE/second.rc"
cp w.duckdb "$OUTSIDE/after.duckdb"
"""
# Another writer on the same disk: it takes every block freed, at once, until the first run has ended.
FILLER = r"""
import os, time
outside, full = os.environ["OUTSIDE"], False
with open(os.path.join(os.environ["DISK"], "filler"), "wb", buffering=0) as fh:
    while not os.path.exists(os.path.join(outside, "first.rc")):
        try:
            fh.write(b"\0" * 65536)
        except OSError:
            if not full:
                full = True
                open(os.path.join(outside, "filled"), "w").close()
            time.sleep(0.001)
"""


@pytest.mark.slow
def test_answers_in_flight_when_another_writer_keeps_the_disk_full_are_kept_not_bought_again(tmp_path):
    """The disk fills mid-shard and another writer keeps it full, taking every block freed. The run
    gave up its reserve to land in its room and the writer took that room: the answers that arrived
    after (the calls in flight when it stopped) were lost and the next run bought them again. They
    go into the reserve itself now, written in place, and the next run loads them."""
    # one shard of 40, landed every 2 s: the disk fills before its first part
    stats, _ = fill_the_disk_while_scoring(tmp_path, KEEPS_FULL, 8, PY=sys.executable, FILLER=FILLER)
    with duckdb.connect(str(tmp_path / "after.duckdb"), read_only=True) as con:
        ok = con.execute("SELECT count(*), count(DISTINCT cell_key) FROM completions WHERE status = 'ok'").fetchone()
    assert ok == (TEXTS, TEXTS)
    # main: the answers that came after the reserve's room was taken were bought again
    assert stats["repeats_after_an_answer"] == 0 and stats["answered"] == TEXTS, stats
