-- One judgment set's criterion scores on every text it scored, beside the rater's label of the
-- same text and criterion where there is one (native units, as labels are written), with the
-- criterion's scale, weight and pass threshold. Params: $corpus, $rubric, $judge_hash, $rater.
SELECT s.criterion_id, s.text_id, c.scale_min, c.scale_max, c.weight, c.pass_threshold,
       s.unit_score AS judge_unit, l.score AS label
FROM criterion_scores s
JOIN criteria c ON c.rubric_hash = s.rubric_hash AND c.criterion_id = s.criterion_id
LEFT JOIN labels l ON l.corpus_id = s.corpus_id AND l.text_id = s.text_id
                  AND l.criterion_id = s.criterion_id AND l.rater = $rater
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge_hash
  AND s.unit_score IS NOT NULL
ORDER BY s.criterion_id, s.text_id;
