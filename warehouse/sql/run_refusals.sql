-- Whether the endpoint refused or never answered a run: its cells landed ok, its cells that failed
-- on a setup problem (a bad key, model or URL) or reached no server, and one such error as it was
-- said. Params: $run.
SELECT count(*) FILTER (WHERE status = 'ok') AS ok_cells,
       count(*) FILTER (WHERE error_kind IN ('setup', 'unreachable')) AS setup_cells,
       min(error) FILTER (WHERE error_kind IN ('setup', 'unreachable') AND attempts > 0) AS setup_error
FROM completions
WHERE run_id = $run;
