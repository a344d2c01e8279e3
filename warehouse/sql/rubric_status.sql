-- Per rubric version: how much it is used (runs, judge calls, texts judged, the last run) and its
-- latest calibration against the humans: the latest `rubricflow calibrate` run of the version (one
-- corpus, one judge setup; its rows share calibrated_at, stamped in one transaction), and the mean,
-- over that run's criteria, of the Pearson r it printed; never a mix of runs, judges or corpora.
-- Forge's usage telemetry and the input of its calibration gate (tasks/pipeline/rubric_status.py).
-- Params: $least (the fewest texts a criterion's r the gate counts was computed on).
WITH usage AS (
    SELECT r.rubric_hash, count(*) AS runs, sum(coalesce(s.calls, 0)) AS calls,
           sum(coalesce(s.ok_cells, 0)) AS ok_cells, max(r.started_at) AS last_used
    FROM runs r
    LEFT JOIN run_summary s USING (run_id)
    GROUP BY r.rubric_hash
),
calibration_runs AS (  -- a criterion's r on fewer than $least texts, or no r, neither flags nor clears a version
    SELECT rubric_hash, calibrated_at, corpus_id, judge, judge_hash, reference, step, score,
           exact_mean(pearson) AS pearson, count(*) AS criteria
    FROM calibrations
    WHERE rubric_hash IS NOT NULL AND pearson IS NOT NULL AND n >= $least
    GROUP BY ALL
),
calibration AS (  -- per version, its latest calibration run
    SELECT *
    FROM calibration_runs
    QUALIFY row_number() OVER (
        PARTITION BY rubric_hash ORDER BY calibrated_at DESC, corpus_id, judge_hash, judge, reference, score, step
    ) = 1
),
models AS (  -- the model of each judge setup that scored a run here
    SELECT judge_hash, any_value(model) AS model FROM runs GROUP BY judge_hash
)
SELECT v.rubric_id, v.version, v.rubric_hash, coalesce(u.runs, 0) AS runs, coalesce(u.calls, 0) AS calls,
       coalesce(u.ok_cells, 0) AS ok_cells, u.last_used, k.calibrated_at, k.pearson, k.criteria,
       k.corpus_id AS calibration_corpus, k.judge_hash AS calibration_judge_hash, m.model AS calibration_model,
       k.score AS calibration_score
FROM rubrics v
LEFT JOIN usage u USING (rubric_hash)
LEFT JOIN calibration k USING (rubric_hash)
LEFT JOIN models m ON m.judge_hash = k.judge_hash
ORDER BY v.rubric_id, v.version, v.rubric_hash;
