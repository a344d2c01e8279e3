-- Part of a refresh (analytics_refresh.sql), run only when stale_runs holds a run
-- (warehouse/analytics.py): with none, every statement here is a no-op.

-- Per run: work done, failures by kind, tokens, latency (of the calls this run made: adopted
-- cells were judged by another), and its judgments, for the runs marked in stale_runs.
CREATE OR REPLACE TEMP TABLE refresh_runs AS SELECT DISTINCT run_id FROM stale_runs;
DELETE FROM stale_runs;
DELETE FROM mat_run_stats WHERE run_id IN (SELECT run_id FROM refresh_runs);
INSERT INTO mat_run_stats BY NAME
WITH c AS (
    SELECT run_id, count(*) FILTER (WHERE adopted_from IS NULL) AS landed_cells,
           count(*) FILTER (WHERE status = 'ok' AND adopted_from IS NULL) AS ok_cells,
           count(*) FILTER (WHERE status <> 'ok' AND adopted_from IS NULL) AS failed_cells,
           sum(attempts) FILTER (WHERE adopted_from IS NULL) AS calls,
           sum(greatest(attempts - 1, 0)) FILTER (WHERE adopted_from IS NULL) AS retries,  -- never negative: a cell that made no call
           sum(prompt_tokens) FILTER (WHERE adopted_from IS NULL) AS prompt_tokens,
           sum(completion_tokens) FILTER (WHERE adopted_from IS NULL) AS completion_tokens,
           sum(cached_tokens) FILTER (WHERE adopted_from IS NULL) AS cached_tokens,
           quantile_cont(latency_ms, 0.5) FILTER (WHERE adopted_from IS NULL) AS latency_p50_ms,
           quantile_cont(latency_ms, 0.95) FILTER (WHERE adopted_from IS NULL) AS latency_p95_ms,
           quantile_cont(queue_ms, 0.5) FILTER (WHERE adopted_from IS NULL) AS queue_p50_ms,  -- waiting in the client
           count(*) FILTER (WHERE adopted_from IS NOT NULL) AS adopted_cells,
           -- call_usd at a rate of one per token for one kind of token and 0 for the others
           sum(call_usd(prompt_tokens, cached_tokens, completion_tokens, output_mode, 1e6, 0, 0)) AS billed_input_tokens,
           sum(call_usd(prompt_tokens, cached_tokens, completion_tokens, output_mode, 0, 1e6, 0)) AS billed_cached_tokens,
           sum(call_usd(prompt_tokens, cached_tokens, completion_tokens, output_mode, 0, 0, 1e6)) AS billed_completion_tokens
    FROM completions WHERE run_id IN (SELECT run_id FROM refresh_runs) GROUP BY run_id
),
e AS (
    SELECT run_id, string_agg(error_kind || '=' || n, ', ' ORDER BY error_kind) AS errors
    FROM (SELECT run_id, error_kind, count(*) AS n FROM completions
          WHERE run_id IN (SELECT run_id FROM refresh_runs) AND error_kind IS NOT NULL AND adopted_from IS NULL
          GROUP BY ALL)
    GROUP BY run_id
),
j AS (
    SELECT run_id, count(*) FILTER (WHERE status = 'scored') AS scored_judgments,
           count(*) FILTER (WHERE status = 'unscored') AS unscored_judgments
    FROM judgments WHERE run_id IN (SELECT run_id FROM refresh_runs) AND adopted_from IS NULL GROUP BY run_id
)
SELECT r.run_id, c.landed_cells, c.ok_cells, c.failed_cells, c.calls, c.retries, c.prompt_tokens,
       c.completion_tokens, c.latency_p50_ms, c.latency_p95_ms, c.queue_p50_ms, e.errors,
       j.scored_judgments, j.unscored_judgments, c.adopted_cells,
       c.billed_input_tokens, c.billed_cached_tokens, c.billed_completion_tokens, c.cached_tokens
FROM refresh_runs r LEFT JOIN c USING (run_id) LEFT JOIN e USING (run_id) LEFT JOIN j USING (run_id);

DROP TABLE refresh_runs;
