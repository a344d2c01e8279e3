-- A labelling plan's rows (registered as `incoming_plan`: text_id, inclusion_prob, chosen, position),
-- replacing a plan of the same id. Params: $plan, $corpus, $rubric, $judge_hash, $mode, $seed, $budget.
DELETE FROM label_plans WHERE plan_id = $plan;
INSERT INTO label_plans (plan_id, corpus_id, rubric_hash, judge_hash, mode, seed, budget, text_id, inclusion_prob,
                         chosen, position, created_at)
SELECT $plan, $corpus, $rubric, $judge_hash, $mode, $seed, $budget, text_id, inclusion_prob, chosen, position, now()
FROM incoming_plan;
