-- One shard of the `plan` table (plan_cells.sql) with its texts, in plan order (its layout's), as steps._write_plan
-- copies it to the shard's Parquet file. Params: $corpus, $shard.
SELECT p.cell_key, p.text_id, p.text_sha256, p.unit_id, p.sample, t.text, t.input, t.context, p.genre
FROM plan p
JOIN texts t ON t.corpus_id = $corpus AND t.text_id = p.text_id
WHERE p.shard = $shard
ORDER BY p.position
