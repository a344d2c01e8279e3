-- The texts one judge has a text score for, among $texts (a strong cell that failed has none).
-- Params: $corpus, $rubric, $judge, $texts.
SELECT text_id FROM text_scores
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND score IS NOT NULL
  AND list_contains($texts::VARCHAR[], text_id);
