-- A corpus's row: where it came from and how many rows loaded or were quarantined.
INSERT OR REPLACE INTO corpora (corpus_id, source, parquet_path, rows_ok, rows_quarantined, ingested_at)
VALUES ($corpus, $source, $parquet, $rows_ok, $rows_quarantined, current_timestamp);
