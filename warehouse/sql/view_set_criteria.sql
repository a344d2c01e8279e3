-- The viewer's judgment-set page: each criterion's mean unit score, spread, scored and unscored
-- judgments and pass rate. Params: $corpus, $rubric, $judge.
SELECT criterion_id, exact_mean(unit_score) AS mean_unit_score, exact_stddev(unit_score) AS stddev,
       sum(scored) AS scored, sum(judgments - scored) AS unscored, avg(passed::INTEGER) AS pass_rate
FROM criterion_scores
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge
GROUP BY criterion_id
ORDER BY criterion_id;
