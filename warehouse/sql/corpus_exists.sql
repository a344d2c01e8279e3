-- Whether a corpus was ingested. Params: $corpus.
SELECT count(*) > 0 AS found FROM corpora WHERE corpus_id = $corpus;
