-- The cheap judge's answers with the probabilities it gave the scale's values (NULL where the
-- endpoint returned no logprobs). Params: $corpus, $rubric, $judge, $only (restrict to $texts), $texts.
SELECT text_id, criterion_id, value, value_probs
FROM judgments
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND status = 'scored'
  AND (NOT $only OR list_contains($texts::VARCHAR[], text_id));
