-- `rubricflow runs`: the latest runs with their counts, tokens and coverage. Params: $limit.
SELECT s.run_id, s.corpus_id, r.rubric_id || ' v' || r.version AS rubric, s.model, s.status,
       s.planned_cells AS planned, s.skipped_cells AS reused, s.landed_cells AS judged,
       s.failed_cells AS failed, s.calls, s.prompt_tokens + s.completion_tokens AS tokens,
       round(s.coverage, 3) AS coverage, round(s.wall_s, 1) AS wall_s
FROM run_summary s JOIN rubrics r USING (rubric_hash)
ORDER BY s.started_at DESC
LIMIT $limit;
