-- Each text one judgment set scored, with the judge's uncertainty about it in [0, 1] (the mean over
-- its criteria of the largest sign of doubt): disagreement among the samples (unit range), the
-- logprob-weighted score's distance from the sampled one (a spread-out answer distribution),
-- disagreement among the judge setups that scored the rubric (a panel), and a score near the
-- criterion's pass threshold. Params: $corpus, $rubric, $judge_hash.
WITH panel AS (
    SELECT text_id, criterion_id, max(unit_score) - min(unit_score) AS spread
    FROM criterion_scores
    WHERE corpus_id = $corpus AND rubric_hash = $rubric AND unit_score IS NOT NULL
    GROUP BY text_id, criterion_id
)
SELECT s.text_id,
       avg(greatest(coalesce(s.unit_max - s.unit_min, 0),
                    coalesce(abs(s.unit_score - s.weighted_unit_score), 0),
                    coalesce(p.spread, 0),
                    greatest(0, 1 - abs(s.unit_score - s.pass_threshold)
                                    / greatest(s.pass_threshold, 1 - s.pass_threshold)))) AS uncertainty
FROM criterion_scores s
LEFT JOIN panel p ON p.text_id = s.text_id AND p.criterion_id = s.criterion_id
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge_hash AND s.unit_score IS NOT NULL
GROUP BY s.text_id
ORDER BY s.text_id;
