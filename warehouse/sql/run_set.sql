-- The judgment set (rubric version x judge) and corpus of one run. Param: $run.
SELECT corpus_id, rubric_hash, judge_hash FROM runs WHERE run_id = $run;
