-- A judgment set's unit score per text and criterion (the mean over samples), for `improve fit`.
-- Params: $corpus, $rubric, $judge.
SELECT text_id, criterion_id, unit_score
FROM criterion_scores
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND unit_score IS NOT NULL
ORDER BY text_id, criterion_id;
