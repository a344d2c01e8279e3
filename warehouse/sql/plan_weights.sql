-- Every text of a labelling plan (chosen or not) with its inclusion probability: $plan names one, or
-- 'latest' the newest plan of the corpus and rubric version. Params: $corpus, $rubric, $plan.
WITH picked AS (
    SELECT plan_id FROM label_plans
    WHERE corpus_id = $corpus AND rubric_hash = $rubric AND ($plan = 'latest' OR plan_id = $plan)
    ORDER BY created_at DESC, plan_id DESC LIMIT 1
)
SELECT p.plan_id, p.text_id, p.inclusion_prob, p.chosen
FROM label_plans p JOIN picked USING (plan_id)
ORDER BY p.text_id;
