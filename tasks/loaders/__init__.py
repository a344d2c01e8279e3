"""Files into normalised rows: corpora (JSONL, CSV, Parquet, folders), pair corpora, labels."""
