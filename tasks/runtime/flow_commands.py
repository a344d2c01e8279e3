"""Which command lines the warm worker (warm_worker.py) may run, in a module that imports nothing: the
`rubricflow` executable reads it before deciding whether to import the worker's client at all, which
a command that runs no flow (query, rubric, report, ...) does not need (~0.05-0.1 s of CPU)."""

WORKER_FLAG = "--serve-warm-worker"  # `python -m rubricflow.launch --serve-warm-worker SOCKET KEY` is a worker
FLOW_COMMANDS = frozenset({"ingest", "score", "compare", "pairwise", "panel", "nightly", "demo"})
