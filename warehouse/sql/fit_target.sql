-- What `improve fit` fits to: per text, the mean of the named raters' labels on one criterion.
-- Params: $corpus, $raters, $criterion.
SELECT text_id, human AS score, raters
FROM label_target($corpus, $raters, $criterion)
ORDER BY text_id;
