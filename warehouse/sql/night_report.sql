-- One night of one rubric against the previous recorded night of the same corpus and rubric id:
-- score shift, coverage, error rate, and canary drift (the judge's own change on fixed texts:
-- the mean absolute score change of canary texts judged both nights). Params: $night, $corpus, $run.
WITH tonight AS (SELECT * FROM nights WHERE night = $night AND corpus_id = $corpus AND run_id = $run),
prev AS (
    SELECT p.* FROM nights p, tonight t
    WHERE p.corpus_id = t.corpus_id AND p.rubric_id = t.rubric_id AND p.night < t.night
    ORDER BY p.night DESC LIMIT 1
),
drift AS (
    SELECT avg(abs(a.score - b.score)) AS canary_drift, count(*) AS canary_texts_compared
    FROM tonight t, prev p
    JOIN text_scores a ON a.corpus_id = t.canary_corpus AND a.rubric_hash = t.rubric_hash AND a.judge_hash = t.judge_hash
    JOIN text_scores b ON b.corpus_id = p.canary_corpus AND b.rubric_hash = p.rubric_hash AND b.judge_hash = p.judge_hash
     AND regexp_replace(b.text_id, '^[^:]*:', '') = regexp_replace(a.text_id, '^[^:]*:', '')
)
SELECT t.night, t.rubric_id || ' ' || left(t.rubric_hash, 8) AS rubric, t.texts, t.scored_texts,
       t.mean_score, t.mean_score - p.mean_score AS score_shift,
       t.coverage, p.coverage AS prev_coverage,
       t.judged_cells, t.failed_cells, t.failed_cells / nullif(t.judged_cells, 0) AS error_rate,
       t.calls, t.canary_mean, d.canary_drift, d.canary_texts_compared, p.night AS prev_night
FROM tonight t LEFT JOIN prev p ON TRUE LEFT JOIN drift d ON TRUE;
