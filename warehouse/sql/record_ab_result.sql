-- Keep an A/B comparison (one per corpus and pair of sides; the latest replaces the earlier).
-- Params: $corpus, $sides, $options, $version (the corpus's analytics version it was computed at), $seconds, $result.
INSERT OR REPLACE INTO ab_results (corpus_id, sides, options, corpus_version, computed_at, seconds, result)
VALUES ($corpus, $sides, $options, $version, current_timestamp, $seconds, $result);
