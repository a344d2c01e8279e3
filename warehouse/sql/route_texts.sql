-- The fields a routed score (`score --route`) chooses a rubric by: each current text's genre and
-- metadata. Params: $corpus.
SELECT text_id, genre, CAST(metadata AS VARCHAR) AS metadata
FROM texts WHERE corpus_id = $corpus AND removed_at IS NULL ORDER BY text_id;
