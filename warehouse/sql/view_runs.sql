-- The viewer's runs page: recent runs, newest first, with their counts, cost and errors.
-- Params: $limit, $offset.
SELECT s.run_id, s.corpus_id, r.rubric_id || '@' || r.version AS rubric, s.rubric_hash, s.judge_hash, s.model,
       s.status, s.planned_cells, s.skipped_cells, s.adopted_cells, s.landed_cells, s.ok_cells, s.failed_cells,
       s.errors, s.calls, s.prompt_tokens + s.completion_tokens AS tokens, s.coverage, c.usd, s.started_at, s.wall_s
FROM run_summary s
JOIN rubrics r USING (rubric_hash)
LEFT JOIN run_costs c USING (run_id)
ORDER BY s.started_at DESC, s.run_id
LIMIT $limit OFFSET $offset;
