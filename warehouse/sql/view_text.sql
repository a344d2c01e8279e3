-- The viewer's text page: the text itself. Params: $corpus, $text.
SELECT corpus_id, text_id, text, input, context, genre, removed_at
FROM texts
WHERE corpus_id = $corpus AND text_id = $text;
