-- A fixed sample of a corpus for the nightly canary: the texts whose id hashes lowest, so the same
-- texts come back every night while the corpus holds them. Params: $corpus, $size.
SELECT text_id, text, input, context
FROM texts WHERE corpus_id = $corpus
ORDER BY sha256(text_id), text_id
LIMIT $size;
