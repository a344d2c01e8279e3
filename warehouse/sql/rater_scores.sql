-- Every rater's score per text and criterion on one corpus: the label raters, and, when $rubric is
-- given, the warehouse judge's scores for that rubric version and judge, mapped back to the scale's
-- native units (labels are native: 1-5, 0/1, ...). $score picks the judge's sampled score or its
-- logprob-weighted one ('weighted'). Params: $corpus, $rubric, $judge_hash, $judge_name, $score.
SELECT criterion_id, rater, text_id, score
FROM labels
WHERE corpus_id = $corpus
UNION ALL
SELECT criterion_id, $judge_name, text_id, coalesce(scale_min + unit * (scale_max - scale_min), unit)
FROM (SELECT s.criterion_id, s.text_id, c.scale_min, c.scale_max,
             CASE WHEN $score = 'weighted' THEN s.weighted_unit_score ELSE s.unit_score END AS unit
      FROM criterion_scores s JOIN criteria c USING (rubric_hash, criterion_id)
      WHERE $rubric IS NOT NULL AND s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge_hash
        -- only what a label can be compared with: a million judged texts with 5,000 labelled
        -- would otherwise all travel to Python
        AND (s.text_id, s.criterion_id) IN (SELECT text_id, criterion_id FROM labels WHERE corpus_id = $corpus))
WHERE unit IS NOT NULL;
