-- The label distribution of the judgment set a run scored. Param: $run.
SELECT coalesce(t.label, '(no label)') AS label, count(*) AS texts, avg(t.score) AS mean_score,
       count(*) FILTER (WHERE t.passed) AS passed, avg(t.coverage) AS coverage
FROM text_scores t
JOIN runs r ON r.corpus_id = t.corpus_id AND r.rubric_hash = t.rubric_hash AND r.judge_hash = t.judge_hash
WHERE r.run_id = $run
GROUP BY ALL ORDER BY mean_score DESC NULLS LAST;
