-- The text scores of the judgment set a run scored. Param: $run.
SELECT t.text_id, t.score
FROM text_scores t
JOIN runs r ON r.corpus_id = t.corpus_id AND r.rubric_hash = t.rubric_hash AND r.judge_hash = t.judge_hash
WHERE r.run_id = $run;
