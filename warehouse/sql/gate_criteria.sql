-- Per criterion of a rubric version: its mean unit score over a judgment set's scored texts of a
-- corpus (NULL when none was scored) and how many texts it rests on. Params: $corpus, $rubric, $judge.
SELECT c.criterion_id, exact_mean(s.unit_score) AS mean, count(s.unit_score) AS scored
FROM criteria c
LEFT JOIN criterion_scores s ON s.rubric_hash = c.rubric_hash AND s.criterion_id = c.criterion_id
     AND s.corpus_id = $corpus AND s.judge_hash = $judge
WHERE c.rubric_hash = $rubric
GROUP BY ALL ORDER BY c.criterion_id;
