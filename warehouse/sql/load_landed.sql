-- Load one landed shard, idempotent by cell_key: a cell landed again replaces its earlier rows.
-- Run inside one transaction. Params: $completions, $judgments (the shard's two Parquet files).
-- The shard's texts and runs (its own, and those whose cells it replaces) are marked for the
-- analytics refresh (warehouse/analytics.py).
INSERT INTO stale_texts SELECT DISTINCT corpus_id, text_id FROM read_parquet($completions);
INSERT INTO stale_runs
SELECT DISTINCT run_id FROM read_parquet($completions)
UNION SELECT DISTINCT run_id FROM completions WHERE cell_key IN (SELECT cell_key FROM read_parquet($completions));
DELETE FROM judgments WHERE cell_key IN (SELECT cell_key FROM read_parquet($completions));
DELETE FROM completions WHERE cell_key IN (SELECT cell_key FROM read_parquet($completions));
-- One row per key (the tables have no primary key to refuse a second: 001_schema.sql).
INSERT INTO completions BY NAME
SELECT * FROM read_parquet($completions) QUALIFY row_number() OVER (PARTITION BY cell_key ORDER BY created_at DESC) = 1;
INSERT INTO judgments BY NAME
SELECT * FROM read_parquet($judgments) QUALIFY row_number() OVER (PARTITION BY cell_key, criterion_id) = 1;
