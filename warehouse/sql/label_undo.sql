-- The labelling page's undo: one rater's label of one text and criterion taken back, the text
-- marked for the analytics refresh. Params: $corpus, $text, $criterion, $rater.
DELETE FROM labels
WHERE corpus_id = $corpus AND text_id = $text AND criterion_id = $criterion AND rater = $rater;
INSERT INTO stale_texts VALUES ($corpus, $text);
