-- Final verdicts beside the human labels, for the kappa. Params: $corpus, $rubric, $judge.
SELECT criterion_id, verdict, label FROM pair_verdicts
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND label IS NOT NULL;
