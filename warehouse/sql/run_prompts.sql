-- `rubricflow runs`' second table: each recent run's prompt tokens (kept apart from recent_runs.sql so
-- the runs table stays readable): its cache layout, the prompt tokens sent, the part a prefix cache
-- served, the least its judgments needed (each distinct prefix once, in the better of the two
-- layouts: tasks/judging/layout_plan.py) and what the cache saved at the model's cached-input rate.
-- Params: $limit.
SELECT s.run_id, s.layout, s.prompt_tokens::BIGINT AS prompt_sent, s.cached_tokens::BIGINT AS prompt_cached,
       s.minimum_prompt_tokens AS prompt_minimum, round(c.cache_saved_usd, 4) AS cache_saved_usd
FROM run_summary s LEFT JOIN run_costs c USING (run_id)
ORDER BY s.started_at DESC
LIMIT $limit;
