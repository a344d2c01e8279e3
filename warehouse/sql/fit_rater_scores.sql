-- One rater's labels of the rubric's criteria per text (another judge's published scores, say), for
-- `improve fit`. Params: $corpus, $rater, $criteria.
SELECT text_id, criterion_id, score
FROM labels
WHERE corpus_id = $corpus AND rater = $rater AND list_contains($criteria, criterion_id)
ORDER BY text_id, criterion_id;
