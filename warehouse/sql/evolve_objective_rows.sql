-- What the objectives of a multi-objective `improve evolve` are computed from, one row per text of a
-- split: the version's text score, the human target, and the spread of its criteria's unit scores
-- across re-asks (samples; NULL spread or one sample: consistency is undefined).
-- Params: $corpus, $rubric, $judge, $raters, $label (the label criterion), $texts (the split's text ids).
WITH target AS (SELECT text_id, human FROM label_target($corpus, $raters, $label)),
spread AS (
    SELECT text_id, avg(unit_stddev) AS spread, min(judgments) AS samples
    FROM criterion_scores
    WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND list_contains($texts, text_id)
      AND unit_score IS NOT NULL
    GROUP BY text_id
)
SELECT s.text_id, s.score, t.human, p.spread, p.samples
FROM text_scores s
JOIN target t USING (text_id)
LEFT JOIN spread p USING (text_id)
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge
  AND list_contains($texts, s.text_id) AND s.score IS NOT NULL
ORDER BY s.text_id;
