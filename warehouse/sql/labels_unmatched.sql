-- Label text ids (registered as `incoming_labels`) that match no current text of a corpus that has
-- texts: how many, and the first few. Nothing is reported for a corpus with no texts (labels alone,
-- e.g. two raters' scores compared with `calibrate --judge`). Param: $corpus.
WITH ids AS (SELECT DISTINCT text_id FROM incoming_labels),
missing AS (SELECT text_id FROM ids WHERE text_id NOT IN (SELECT text_id FROM current_texts WHERE corpus_id = $corpus))
SELECT count(*) AS unmatched, (SELECT count(*) FROM ids) AS label_ids,
       list(text_id ORDER BY text_id)[1:5] AS examples
FROM missing
WHERE EXISTS (SELECT 1 FROM current_texts WHERE corpus_id = $corpus);
