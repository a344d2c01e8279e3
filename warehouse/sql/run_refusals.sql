-- Whether the endpoint gave a run no usable answer: its cells landed ok, its cells that failed on a
-- setup problem (a bad key, model or URL), reached no server, or kept failing transiently (429s,
-- 5xx, a proxy's HTML page), all of which a later run plans again, and one such error as it was said.
-- The kinds are FailureKind.unanswered() (tasks/judging/failures.py; a test pins them). Params: $run.
SELECT count(*) FILTER (WHERE status = 'ok') AS ok_cells,
       count(*) FILTER (WHERE error_kind IN ('setup', 'unreachable', 'transient')) AS unanswered_cells,
       min(error) FILTER (WHERE error_kind IN ('setup', 'unreachable', 'transient') AND attempts > 0) AS unanswered_error,
       count(*) FILTER (WHERE error_kind = 'setup') AS setup_cells,
       min(error) FILTER (WHERE error_kind = 'setup') AS setup_error
FROM completions
WHERE run_id = $run;
