-- The viewer's text page: the text itself, with the version its current judgments judged (NULL
-- for a removed text: it has none; views.sql: current_texts). Params: $corpus, $text.
SELECT corpus_id, text_id, text, input, context, genre, removed_at,
       CASE WHEN removed_at IS NULL THEN text_version(sha256, input, context, genre) END AS version
FROM texts
WHERE corpus_id = $corpus AND text_id = $text;
