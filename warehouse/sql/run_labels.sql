-- The label distribution of the judgment set a run scored; a text a routed score sent to another
-- rubric counts as '(not routed)', not as a text without a label. Param: $run.
SELECT coalesce(t.label, CASE WHEN rs.route_status = 'not routed' THEN '(not routed)' END, '(no label)') AS label,
       count(*) AS texts, avg(t.score) AS mean_score,
       count(*) FILTER (WHERE t.passed) AS passed, avg(t.coverage) AS coverage
FROM text_scores t
JOIN runs r ON r.corpus_id = t.corpus_id AND r.rubric_hash = t.rubric_hash AND r.judge_hash = t.judge_hash
LEFT JOIN text_route_status rs
    ON rs.corpus_id = t.corpus_id AND rs.rubric_hash = t.rubric_hash AND rs.judge_hash = t.judge_hash AND rs.text_id = t.text_id
WHERE r.run_id = $run
GROUP BY ALL ORDER BY mean_score DESC NULLS LAST;
