-- A rater's labels of a rubric version's criteria on one corpus. Params: $corpus, $rubric, $rater.
SELECT l.text_id, l.criterion_id, l.score
FROM labels l JOIN criteria c ON c.rubric_hash = $rubric AND c.criterion_id = l.criterion_id
WHERE l.corpus_id = $corpus AND l.rater = $rater;
