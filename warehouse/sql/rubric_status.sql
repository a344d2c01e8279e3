-- Per rubric version: how much it is used (runs, judge calls, texts judged, the last run) and its
-- latest calibration against the humans (the mean, over its criteria, of each criterion's latest
-- Pearson r): Forge's usage telemetry and the input of its calibration gate (tasks/pipeline/rubric_status.py).
-- Params: $least (the fewest texts a calibration the gate counts was made on).
WITH usage AS (
    SELECT r.rubric_hash, count(*) AS runs, sum(coalesce(s.calls, 0)) AS calls,
           sum(coalesce(s.ok_cells, 0)) AS ok_cells, max(r.started_at) AS last_used
    FROM runs r
    LEFT JOIN run_summary s USING (run_id)
    GROUP BY r.rubric_hash
),
latest AS (  -- a calibration on fewer than $least texts, or with no r, neither flags nor clears a version
    SELECT rubric_hash, criterion_id, arg_max(pearson, calibrated_at) AS pearson, max(calibrated_at) AS latest_at
    FROM calibrations
    WHERE rubric_hash IS NOT NULL AND pearson IS NOT NULL AND n >= $least
    GROUP BY ALL
),
calibration AS (
    SELECT rubric_hash, avg(pearson) AS pearson, count(pearson) AS criteria, max(latest_at) AS calibrated_at
    FROM latest
    GROUP BY rubric_hash
)
SELECT v.rubric_id, v.version, v.rubric_hash, coalesce(u.runs, 0) AS runs, coalesce(u.calls, 0) AS calls,
       coalesce(u.ok_cells, 0) AS ok_cells, u.last_used, k.calibrated_at, k.pearson, k.criteria
FROM rubrics v
LEFT JOIN usage u USING (rubric_hash)
LEFT JOIN calibration k USING (rubric_hash)
ORDER BY v.rubric_id, v.version, v.rubric_hash;
