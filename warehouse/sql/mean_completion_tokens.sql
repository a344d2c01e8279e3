-- The mean answer size of a rubric version under one judge, from its usable completions (for the
-- cost estimate; NULL before any landed). Params: $rubric, $judge.
SELECT avg(completion_tokens) AS mean_tokens
FROM completions
WHERE rubric_hash = $rubric AND judge_hash = $judge AND status = 'ok';
