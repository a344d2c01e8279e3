-- A routed score's choices, one row per text (the registered table routes(text_id, value, choice,
-- rubric_hash)). Params: $corpus, $selector.
INSERT INTO text_routes (corpus_id, text_id, selector, value, choice, rubric_hash, routed_at)
SELECT $corpus, text_id, $selector, value, choice, rubric_hash, current_timestamp FROM routes;
