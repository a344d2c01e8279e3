-- One run's summary row with its rubric's name. Param: $run.
SELECT s.*, r.rubric_id || '@' || r.version AS rubric
FROM run_summary s JOIN rubrics r USING (rubric_hash)
WHERE s.run_id = $run;
