-- The evolution of a corpus started last (for `report evolution` without --id). Param: $corpus.
SELECT evolution_id, corpus_id, rubric_hash, target, started_at
FROM evolutions
WHERE corpus_id = $corpus
ORDER BY started_at DESC
LIMIT 1;
