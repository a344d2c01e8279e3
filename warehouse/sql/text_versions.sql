-- `rubricflow show`: a text in every corpus that holds its id (or in one). Params: $text, $corpus (or NULL).
SELECT corpus_id, text, genre FROM texts
WHERE text_id = $text AND ($corpus IS NULL OR corpus_id = $corpus)
ORDER BY corpus_id;
