-- The metadata an export carries: one run's row with its rubric and coverage (parameters never
-- hold secrets). Param: $run.
SELECT r.run_id, r.corpus_id, rb.rubric_id || '@' || rb.version AS rubric, r.rubric_hash, r.judge_hash, r.model,
       r.strategy, r.samples, r.parameters, r.status, r.started_at, r.finished_at, s.coverage
FROM runs r JOIN rubrics rb USING (rubric_hash) LEFT JOIN run_summary s USING (run_id)
WHERE r.run_id = $run;
