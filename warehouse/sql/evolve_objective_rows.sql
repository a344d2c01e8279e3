-- What the objectives of a multi-objective `improve evolve` are computed from (seed 001's definitions),
-- one row per text of a split: the version's text score, the human target and the range of the human
-- target over the whole corpus (agreement: the target on the unit scale), each criterion's unit score
-- (discrimination: their spread), and the mean over criteria of the coefficient of variation of a
-- criterion's unit scores across re-asks (consistency; NULL with one sample), with the fewest samples.
-- `criteria`: per criterion the raters labelled, its weight and the error of the judge against their
-- mean label, both on the criterion's unit scale (the label clamped into it, as rubrify's to_unit does;
-- a nominal label is a unit score already), 1.0 where the judge has no score (rubrify's agreement).
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
),
labelled AS (
    SELECT text_id, criterion_id, avg(score) AS human
    FROM labels
    WHERE corpus_id = $corpus AND list_contains($raters, rater) AND list_contains($texts, text_id)
    GROUP BY ALL
),
per_criterion AS (
    SELECT l.text_id,
           list({'criterion_id': c.criterion_id, 'weight': c.weight,
                 'error': coalesce(abs(greatest(0.0, least(1.0, coalesce((l.human - c.scale_min)
                          / nullif(c.scale_max - c.scale_min, 0), l.human))) - s.unit_score), 1.0)}
                ORDER BY c.criterion_id) AS criteria
    FROM labelled l
    JOIN criteria c ON c.rubric_hash = $rubric AND c.criterion_id = l.criterion_id
    LEFT JOIN criterion_scores s ON s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge
        AND s.text_id = l.text_id AND s.criterion_id = l.criterion_id
    GROUP BY l.text_id
)
SELECT s.text_id, s.score, t.human, t.human_min, t.human_max, p.units, p.cv, p.samples, k.criteria
FROM text_scores s
JOIN target t USING (text_id)
LEFT JOIN per_text p USING (text_id)
LEFT JOIN per_criterion k USING (text_id)
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge
  AND list_contains($texts, s.text_id) AND s.score IS NOT NULL
ORDER BY s.text_id;
