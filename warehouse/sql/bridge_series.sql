-- A corpus's nightly series for a rubric version with, per night, the newest stitchable bridge from
-- that night's judge (its verdict), if any: `rubricflow judge series` restates those nights on the
-- bridge's new judge's scale. Params: $corpus, $rubric (a rubric hash).
WITH bridges AS (
    SELECT old_judge, arg_max(new_judge, created_at) AS new_judge, arg_max(verdict, created_at) AS verdict
    FROM judge_bridges
    WHERE corpus_id = $corpus AND rubric_hash = $rubric AND stitchable
    GROUP BY old_judge
)
SELECT n.night, n.judge_hash, n.run_id, n.mean_score, n.coverage, b.new_judge, b.verdict
FROM nights n LEFT JOIN bridges b ON b.old_judge = n.judge_hash
WHERE n.corpus_id = $corpus AND n.rubric_hash = $rubric
ORDER BY n.recorded_at, n.night;
