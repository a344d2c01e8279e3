-- The latest run of one judgment set on a corpus. Params: $corpus, $rubric, $judge.
SELECT run_id FROM runs
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge
ORDER BY started_at DESC, run_id DESC LIMIT 1;
