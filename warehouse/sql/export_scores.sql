-- `rubricflow export scores`: per text of the corpus's current texts, the judgment set's score,
-- label, pass/fail, disqualifiers and coverage, with the run that is exported. Param: $run.
SELECT r.run_id, r.model, s.corpus_id, s.rubric_id || '@' || s.version AS rubric, s.rubric_hash, s.judge_hash,
       s.text_id, s.score, s.label, s.passed, s.disqualifiers, s.scored_criteria, s.planned_criteria, s.coverage
FROM runs r
JOIN text_scores s ON s.corpus_id = r.corpus_id AND s.rubric_hash = r.rubric_hash AND s.judge_hash = r.judge_hash
WHERE r.run_id = $run
ORDER BY s.text_id;
