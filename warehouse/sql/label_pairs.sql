-- Paired scores of two raters on the same texts and criteria (judge vs human, or human vs human).
-- Params: $corpus, $a, $b (rater names).
SELECT a.criterion_id, a.text_id, a.score AS a_score, b.score AS b_score
FROM labels a
JOIN labels b ON b.corpus_id = a.corpus_id AND b.text_id = a.text_id AND b.criterion_id = a.criterion_id
WHERE a.corpus_id = $corpus AND a.rater = $a AND b.rater = $b
ORDER BY a.criterion_id, a.text_id;
