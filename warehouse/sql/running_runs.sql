-- Runs still marked running: each is either live (its process holds its lock) or stale.
SELECT run_id, corpus_id, rubric_hash, judge_hash FROM runs WHERE status = 'running' ORDER BY started_at;
