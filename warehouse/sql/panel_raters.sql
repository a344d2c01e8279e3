-- Every judge's score per text and criterion for one rubric version on a corpus, in the scale's
-- native units, each judge named by its model and judge hash, with the scale's native minimum and
-- step (its categories for kappa; NULL for nominal scales). Params: $corpus, $rubric.
SELECT s.criterion_id, j.model || ' (' || left(s.judge_hash, 8) || ')' AS judge, s.text_id, c.scale_kind,
       coalesce(c.scale_min + s.unit_score * (c.scale_max - c.scale_min), s.unit_score) AS score,
       c.scale_min, c.unit_step * (c.scale_max - c.scale_min) AS step
FROM criterion_scores s
JOIN criteria c USING (rubric_hash, criterion_id)
JOIN (SELECT judge_hash, any_value(model) AS model FROM runs
      WHERE corpus_id = $corpus AND rubric_hash = $rubric GROUP BY judge_hash) j USING (judge_hash)
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.unit_score IS NOT NULL
ORDER BY s.criterion_id, judge, s.text_id;
