-- The live texts of a corpus, for a sequential A/B's seeded order. Params: $corpus.
SELECT text_id FROM texts WHERE corpus_id = $corpus AND removed_at IS NULL ORDER BY text_id;
