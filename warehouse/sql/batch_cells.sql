-- The cells of one submitted batch, with their texts as they were when submitted (a text changed
-- since is left out: its new version is new work). Param: $batch.
SELECT r.cell_key, r.text_id, r.text_sha256, r.unit_id, r.sample, t.text, t.input, t.context, t.genre
FROM batch_requests r
JOIN batches b USING (batch_id)
JOIN texts t ON t.corpus_id = b.corpus_id AND t.text_id = r.text_id AND text_version(t.sha256, t.input, t.context, t.genre) = r.text_sha256
WHERE r.batch_id = $batch
ORDER BY r.cell_key;
