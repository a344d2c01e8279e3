-- How many live texts (not marked removed) a corpus holds. Params: $corpus.
SELECT count(*) AS texts FROM texts WHERE corpus_id = $corpus AND removed_at IS NULL;
