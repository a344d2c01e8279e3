-- The rater's labels of a rubric's criteria on texts this judgment set never scored (an estimate
-- cannot pair them with a judge score): how many per criterion, and a few of their text ids.
-- Params: $corpus, $rubric, $judge_hash, $rater.
SELECT l.criterion_id, count(*) AS labels, list(l.text_id ORDER BY l.text_id)[1:3] AS examples
FROM labels l
JOIN criteria c ON c.rubric_hash = $rubric AND c.criterion_id = l.criterion_id
WHERE l.corpus_id = $corpus AND l.rater = $rater
  AND NOT EXISTS (SELECT 1 FROM criterion_scores s
                  WHERE s.corpus_id = l.corpus_id AND s.rubric_hash = $rubric AND s.judge_hash = $judge_hash
                    AND s.text_id = l.text_id AND s.criterion_id = l.criterion_id AND s.unit_score IS NOT NULL)
GROUP BY l.criterion_id
ORDER BY l.criterion_id;
