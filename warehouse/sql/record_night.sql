-- Record one night of one rubric: the judgment set's coverage and mean score, the run's work and
-- errors, and the canary's mean score. Re-running a night replaces its record.
-- Params: $night, $corpus, $run, $canary_run (NULL without a canary).
DELETE FROM nights WHERE night = $night AND corpus_id = $corpus
  AND rubric_hash = (SELECT rubric_hash FROM runs WHERE run_id = $run);

INSERT INTO nights (night, corpus_id, rubric_id, rubric_hash, judge_hash, run_id, texts, scored_texts, mean_score,
                    coverage, judged_cells, failed_cells, calls, canary_corpus, canary_mean, recorded_at)
SELECT $night, r.corpus_id, rb.rubric_id, r.rubric_hash, r.judge_hash, r.run_id,
       count(t.text_id), count(t.score), avg(t.score), avg(t.coverage),
       any_value(s.landed_cells), any_value(s.failed_cells), any_value(s.calls),
       (SELECT corpus_id FROM runs WHERE run_id = $canary_run),
       (SELECT avg(c.score) FROM text_scores c JOIN runs cr ON cr.run_id = $canary_run
         AND c.corpus_id = cr.corpus_id AND c.rubric_hash = cr.rubric_hash AND c.judge_hash = cr.judge_hash),
       current_timestamp
FROM runs r
JOIN rubrics rb ON rb.rubric_hash = r.rubric_hash
JOIN run_summary s ON s.run_id = r.run_id
LEFT JOIN text_scores t ON t.corpus_id = r.corpus_id AND t.rubric_hash = r.rubric_hash AND t.judge_hash = r.judge_hash
WHERE r.run_id = $run
GROUP BY ALL;
