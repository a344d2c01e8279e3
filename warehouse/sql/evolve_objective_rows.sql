-- What the objectives of a multi-objective `improve evolve` are computed from (seed 001's definitions),
-- one row per text of a split: the version's text score, the human target and the range of the human
-- target over the whole corpus (agreement: the target on the unit scale), each criterion's unit score
-- (discrimination: their spread), and the mean over criteria of the coefficient of variation of a
-- criterion's unit scores across re-asks (consistency; NULL with one sample), with the fewest samples.
-- Params: $corpus, $rubric, $judge, $raters, $label (the label criterion), $texts (the split's text ids).
WITH target AS (
    SELECT text_id, human, min(human) OVER () AS human_min, max(human) OVER () AS human_max
    FROM label_target($corpus, $raters, $label)
),
per_text AS (
    SELECT text_id, list(unit_score ORDER BY criterion_id) AS units, min(judgments) AS samples,
           avg(CASE WHEN unit_stddev IS NULL THEN NULL
                    WHEN unit_score > 0 THEN unit_stddev / unit_score
                    WHEN unit_stddev = 0 THEN 0.0 ELSE 1.0 END) AS cv
    FROM criterion_scores
    WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND list_contains($texts, text_id)
      AND unit_score IS NOT NULL
    GROUP BY text_id
)
SELECT s.text_id, s.score, t.human, t.human_min, t.human_max, p.units, p.cv, p.samples
FROM text_scores s
JOIN target t USING (text_id)
LEFT JOIN per_text p USING (text_id)
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge
  AND list_contains($texts, s.text_id) AND s.score IS NOT NULL
ORDER BY s.text_id;
