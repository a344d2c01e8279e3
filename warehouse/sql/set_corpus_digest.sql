UPDATE corpora SET source_sha256 = $digest WHERE corpus_id = $corpus;
