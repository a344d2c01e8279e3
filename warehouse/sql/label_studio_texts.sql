-- The texts of a labelling queue as Label Studio tasks carry them (labels export-ls; the caller
-- keeps the queue's order). Params: $corpus, $ids.
SELECT text_id, text, input, context
FROM texts
WHERE corpus_id = $corpus AND list_contains($ids, text_id);
