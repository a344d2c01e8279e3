-- A rater's labels of a rubric version's criteria on a corpus, on the unit scale the judges' scores
-- are on (a judge-succession bridge equates both judges to them). Params: $corpus, $rubric, $rater.
SELECT l.text_id, l.criterion_id,
       CASE WHEN c.scale_max > c.scale_min THEN (l.score - c.scale_min) / (c.scale_max - c.scale_min) ELSE l.score END
           AS unit_label
FROM labels l JOIN criteria c ON c.rubric_hash = $rubric AND c.criterion_id = l.criterion_id
WHERE l.corpus_id = $corpus AND l.rater = $rater
ORDER BY l.criterion_id, l.text_id;
