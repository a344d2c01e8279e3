-- `rubricflow runs`: the latest runs with their counts, tokens and coverage; the prompt tokens sent,
-- the part a prefix cache served, and the least the judgments needed (each distinct prefix once,
-- in the better of the two layouts: tasks/judging/layout_plan.py). Params: $limit.
SELECT s.run_id, s.corpus_id, r.rubric_id || ' v' || r.version AS rubric, s.model, s.status,
       s.planned_cells AS planned, s.skipped_cells AS reused, s.landed_cells AS judged,
       s.failed_cells AS failed, s.calls, s.prompt_tokens + s.completion_tokens AS tokens,
       s.layout, s.prompt_tokens::BIGINT AS prompt_sent, s.cached_tokens::BIGINT AS prompt_cached,
       s.minimum_prompt_tokens AS prompt_minimum,
       round(s.coverage, 3) AS coverage, round(s.wall_s, 1) AS wall_s
FROM run_summary s JOIN rubrics r USING (rubric_hash)
ORDER BY s.started_at DESC
LIMIT $limit;
