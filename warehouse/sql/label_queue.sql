-- The texts to label for a rubric version, in labelling order: the chosen texts of its newest
-- labelling plan on the corpus (label_plans), or, without a plan, every text the judge scored.
-- Params: $corpus, $rubric, $judge_hash.
WITH latest AS (
    SELECT plan_id FROM label_plans
    WHERE corpus_id = $corpus AND rubric_hash = $rubric
    ORDER BY created_at DESC, plan_id DESC LIMIT 1
)
SELECT text_id, position FROM label_plans WHERE plan_id = (SELECT plan_id FROM latest) AND chosen
UNION ALL
SELECT DISTINCT text_id, NULL::INTEGER FROM criterion_scores
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge_hash
  AND NOT EXISTS (SELECT 1 FROM latest)
ORDER BY position NULLS LAST, text_id;
