-- Every rater's score per text and criterion on one corpus: the label raters, and, when $rubric is
-- given, the warehouse judge's scores for that rubric version and judge, mapped back to the scale's
-- native units (labels are native: 1-5, 0/1, ...). Params: $corpus, $rubric, $judge_hash, $judge_name.
SELECT criterion_id, rater, text_id, score
FROM labels
WHERE corpus_id = $corpus
UNION ALL
SELECT s.criterion_id, $judge_name, s.text_id,
       coalesce(c.scale_min + s.unit_score * (c.scale_max - c.scale_min), s.unit_score)
FROM criterion_scores s JOIN criteria c USING (rubric_hash, criterion_id)
WHERE $rubric IS NOT NULL AND s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge_hash
  AND s.unit_score IS NOT NULL;
