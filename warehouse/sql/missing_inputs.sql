-- Texts of a corpus without a value for one of the rubric's required inputs (input or context):
-- scoring them would judge without what the rubric says it needs. Params: $corpus, $column.
SELECT text_id FROM texts
WHERE corpus_id = $corpus
  AND coalesce(trim(CASE $column WHEN 'input' THEN input WHEN 'context' THEN context END), '') = ''
ORDER BY text_id
LIMIT 6;
