-- The viewer's runs page: recent runs, newest first, with their counts, cost and errors, and
-- `judge_before`: the judge hash of the previous run of the same corpus and rubric version when it
-- differs from this run's (a judge change: the series on either side is on another judge's scale;
-- `rubricflow judge bridge` carries it over); the prompt tokens sent, cached and needed at least, the
-- run's cache layout and what the cache saved. Params: $limit, $offset.
WITH changes AS (
    SELECT run_id, lag(judge_hash) OVER (PARTITION BY corpus_id, rubric_hash ORDER BY started_at, run_id) AS before
    FROM runs
)
SELECT s.run_id, s.corpus_id, r.rubric_id || '@' || r.version AS rubric, s.rubric_hash, s.judge_hash, s.model,
       s.status, s.planned_cells, s.skipped_cells, s.adopted_cells, s.landed_cells, s.ok_cells, s.failed_cells,
       s.errors, s.calls, s.prompt_tokens + s.completion_tokens AS tokens, s.coverage, c.usd, s.started_at, s.wall_s,
       s.layout, s.layout_reason, s.prompt_tokens, s.cached_tokens, s.minimum_prompt_tokens, c.cache_saved_usd,
       CASE WHEN g.before <> s.judge_hash THEN g.before END AS judge_before
FROM run_summary s
JOIN rubrics r USING (rubric_hash)
LEFT JOIN run_costs c USING (run_id)
LEFT JOIN changes g USING (run_id)
ORDER BY s.started_at DESC, s.run_id
LIMIT $limit OFFSET $offset;
