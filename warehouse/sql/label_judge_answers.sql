-- The judge's answer per criterion on one text, in the scale's native units (shown to a labeller
-- after they answered). Params: $corpus, $rubric, $judge_hash, $text.
SELECT s.criterion_id, coalesce(c.scale_min + s.unit_score * (c.scale_max - c.scale_min), s.unit_score) AS score
FROM criterion_scores s JOIN criteria c USING (rubric_hash, criterion_id)
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge_hash AND s.text_id = $text;
