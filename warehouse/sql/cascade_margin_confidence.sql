-- The cheap judge's expected text score and the scores where its verdict changes, per text: each
-- criterion's expected unit score (its logprob-weighted score, G-Eval style, where every sample of the
-- cell has one; else the mean of its re-asks where it has two or more), combined as the rubric's
-- weighted mean (inverted where the rubric inverts); the verdict's boundaries are the rubric's pass
-- threshold, or where it has none its labels' lower bounds but the lowest. A text with a cell whose
-- expectation is unknown (one sample without logprobs) gives none (flows/cascade.py escalates it).
-- Exact at 9 decimals as every score (views.sql: exact_mean): the same judgments, the same bits.
-- Params: $corpus, $rubric, $judge, $texts.
WITH cells AS (
    SELECT j.text_id, j.criterion_id, any_value(c.weight) AS weight,
           CASE WHEN count(j.weighted_unit_score) = count(j.unit_score) THEN exact_mean(j.weighted_unit_score)
                WHEN count(j.unit_score) >= 2 THEN exact_mean(j.unit_score) END AS expected
    FROM judgments j
    JOIN criteria c ON c.rubric_hash = j.rubric_hash AND c.criterion_id = j.criterion_id
    WHERE j.corpus_id = $corpus AND j.rubric_hash = $rubric AND j.judge_hash = $judge AND j.status = 'scored'
      AND j.unit_score IS NOT NULL AND list_contains($texts::VARCHAR[], j.text_id)
    GROUP BY j.text_id, j.criterion_id
), texts AS (
    SELECT text_id, round(sum(weight * expected) / sum(weight), 9) AS expected
    FROM cells GROUP BY text_id HAVING count(expected) = count(*) AND sum(weight) > 0
), rubric AS (
    SELECT r.invert,
           CASE WHEN r.pass_threshold IS NOT NULL THEN [r.pass_threshold]
                ELSE coalesce((SELECT list(l.min_score ORDER BY l.min_score)[2:] FROM rubric_labels l
                               WHERE l.rubric_hash = r.rubric_hash), []) END AS boundaries
    FROM rubrics r WHERE r.rubric_hash = $rubric
)
SELECT t.text_id, CASE WHEN rubric.invert THEN 1 - t.expected ELSE t.expected END AS expected, rubric.boundaries
FROM texts t CROSS JOIN rubric
ORDER BY t.text_id;
