-- Per criterion of the judgment set a run scored: mean unit score, coverage, pass rate, and the
-- repeat-sampling consistency (mean stddev and flip rate over texts judged more than once). Param: $run.
SELECT s.criterion_id, avg(s.unit_score) AS mean_unit_score, sum(s.scored) AS scored,
       sum(s.judgments) - sum(s.scored) AS unscored, count(*) FILTER (WHERE s.passed) AS texts_passing,
       avg(s.unit_stddev) AS sample_stddev,
       avg(CASE WHEN s.scored > 1 THEN (s.unit_min < s.pass_threshold AND s.unit_max >= s.pass_threshold)::INT END) AS flip_rate
FROM criterion_scores s
JOIN runs r ON r.corpus_id = s.corpus_id AND r.rubric_hash = s.rubric_hash AND r.judge_hash = s.judge_hash
WHERE r.run_id = $run
GROUP BY ALL ORDER BY s.criterion_id;
