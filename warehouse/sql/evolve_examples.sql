-- The training texts where one criterion's scores and the human target disagree most (the largest
-- gap between their z-scores), shown to the reflection model.
-- Params: $corpus, $rubric, $judge, $raters, $label (the label criterion), $criterion (the
-- criterion to improve), $texts (the training text ids), $limit.
WITH target AS (SELECT text_id, human FROM label_target($corpus, $raters, $label)),
paired AS (
    SELECT c.text_id, c.unit_score AS judge, t.human
    FROM criterion_scores c
    JOIN target t USING (text_id)
    WHERE c.corpus_id = $corpus AND c.rubric_hash = $rubric AND c.judge_hash = $judge
      AND c.criterion_id = $criterion AND list_contains($texts, c.text_id) AND c.unit_score IS NOT NULL
),
z AS (
    SELECT *, (judge - avg(judge) OVER ()) / nullif(stddev_pop(judge) OVER (), 0) AS zj,
              (human - avg(human) OVER ()) / nullif(stddev_pop(human) OVER (), 0) AS zh
    FROM paired
)
SELECT z.text_id, x.text, z.human, z.judge
FROM z
JOIN texts x ON x.corpus_id = $corpus AND x.text_id = z.text_id
ORDER BY round(abs(coalesce(zj, 0) - coalesce(zh, 0)), 9) DESC, z.text_id  -- ties by id, not by noise
LIMIT $limit;
