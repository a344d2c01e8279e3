-- Which criterion to improve: each criterion's Pearson r with the human target on the training
-- texts, least agreeing first (a criterion with constant scores, r undefined, comes first). r is
-- rounded to 9 decimals: equal agreements differ in their last bits by the order of DuckDB's parallel
-- sums, and the tie must go by criterion id, or two identical seeded evolutions pick different criteria.
-- Params: $corpus, $rubric, $judge, $raters, $label (the label criterion), $texts (the training text ids).
WITH target AS (SELECT text_id, human FROM label_target($corpus, $raters, $label))
SELECT c.criterion_id, round(corr(c.unit_score, t.human), 9) AS pearson, count(*) AS texts
FROM criterion_scores c
JOIN target t USING (text_id)
WHERE c.corpus_id = $corpus AND c.rubric_hash = $rubric AND c.judge_hash = $judge
  AND list_contains($texts, c.text_id) AND c.unit_score IS NOT NULL
GROUP BY c.criterion_id
ORDER BY pearson ASC NULLS FIRST, c.criterion_id;
