-- Texts of a corpus without a value for one of the rubric's required inputs (input or context):
-- scoring them would judge without what the rubric says it needs. $texts: only these texts (a
-- routed score checks each text against the rubric it is routed to), or NULL for every text.
-- Params: $corpus, $column, $texts.
SELECT text_id FROM texts
WHERE corpus_id = $corpus
  AND ($texts::VARCHAR[] IS NULL OR list_contains($texts::VARCHAR[], text_id))
  AND coalesce(trim(CASE $column WHEN 'input' THEN input WHEN 'context' THEN context END), '') = ''
ORDER BY text_id
LIMIT 6;
