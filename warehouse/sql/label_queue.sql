-- The texts to label for a rubric version, in labelling order: first the texts a judge cascade left
-- to a human on the corpus (cascade_texts level 'human': the strong judge was unsure of them), then
-- the chosen texts of its newest labelling plan on the corpus (label_plans), or, without a plan,
-- every text the judge scored. Params: $corpus, $rubric, $judge_hash.
WITH latest AS (
    SELECT plan_id FROM label_plans
    WHERE corpus_id = $corpus AND rubric_hash = $rubric
    ORDER BY created_at DESC, plan_id DESC LIMIT 1
),
queue AS (
    SELECT t.text_id, 0 AS part, NULL::INTEGER AS position
    FROM cascades k JOIN cascade_texts t USING (cascade_id)
    WHERE k.corpus_id = $corpus AND k.rubric_hash = $rubric AND t.level = 'human'
    UNION ALL
    SELECT text_id, 1, position FROM label_plans WHERE plan_id = (SELECT plan_id FROM latest) AND chosen
    UNION ALL
    SELECT DISTINCT text_id, 1, NULL::INTEGER FROM criterion_scores
    WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge_hash
      AND NOT EXISTS (SELECT 1 FROM latest)
)
SELECT text_id, min(position) AS position FROM queue
GROUP BY text_id
ORDER BY min(part), min(position) NULLS LAST, text_id;
