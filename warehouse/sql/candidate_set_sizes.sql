-- How many candidates the sets of a corpus hold (tasks/loaders/candidates.py); NULL for a text
-- that is no candidate set. Params: $corpus.
SELECT DISTINCT TRY_CAST(metadata->>'candidates' AS INTEGER) AS n
FROM texts WHERE corpus_id = $corpus AND removed_at IS NULL
ORDER BY n NULLS FIRST;
