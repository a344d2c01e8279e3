-- The corpus's analytics version (0 before its first refresh). Params: $corpus.
SELECT coalesce((SELECT version FROM analytics_versions WHERE corpus_id = $corpus), 0) AS version;
