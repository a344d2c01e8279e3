-- The cheap judge's ok cells on these texts that landed with no logprobs at all (a run against an
-- endpoint that returned none): marked failed (`transient`, with the reason), so the next score's
-- plan asks them again. A cascade once run against such an endpoint was refused for good on that
-- corpus (its cells were the cache); against one that returns logprobs now, it measures its
-- confidence. Their judgments stay until the new answers replace them. Params: $corpus, $rubric,
-- $judge, $texts.
UPDATE completions
SET status = 'failed', error_kind = 'transient',
    error = 'landed without logprobs: asked again for the cascade''s confidence'
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND status = 'ok'
  AND list_contains($texts::VARCHAR[], text_id)
  AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.cell_key = completions.cell_key AND j.value_probs IS NOT NULL);
