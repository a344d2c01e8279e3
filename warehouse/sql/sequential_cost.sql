-- What the texts a sequential A/B walked cost, both sides together: calls and (where every model
-- has a price) USD. Params: $corpus, $rubric_a, $judge_a, $rubric_b, $judge_b, $texts.
SELECT count(*) AS cells,
       CASE WHEN bool_and(p.model IS NOT NULL) THEN
           sum(call_usd(c.prompt_tokens, c.cached_tokens, c.completion_tokens, c.output_mode,
                        p.input_per_mtok, p.cached_input_per_mtok, p.output_per_mtok)) END AS usd
FROM completions c
JOIN runs r USING (run_id)
LEFT JOIN model_prices p ON p.model = r.model
WHERE c.corpus_id = $corpus AND c.status = 'ok'
  AND ((c.rubric_hash = $rubric_a AND c.judge_hash = $judge_a) OR (c.rubric_hash = $rubric_b AND c.judge_hash = $judge_b))
  AND list_contains($texts::VARCHAR[], c.text_id);
