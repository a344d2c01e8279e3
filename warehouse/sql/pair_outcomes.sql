-- The final verdicts of pairs that name their systems, for a ranking. Params: $corpus, $rubric, $judge.
SELECT criterion_id, system_a, system_b, verdict
FROM pair_verdicts
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge
  AND system_a IS NOT NULL AND system_b IS NOT NULL AND system_a <> system_b;
