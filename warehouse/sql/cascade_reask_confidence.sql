-- The cheap judge's agreement with itself across re-asks (repeat samples) on each text: per
-- criterion, the share of its samples that gave the most common value; the text's confidence is
-- its least agreeing criterion's. Cells with fewer than two samples give none.
-- Params: $corpus, $rubric, $judge, $texts.
WITH answers AS (
    SELECT DISTINCT text_id, criterion_id, sample, value::VARCHAR AS value
    FROM judgments
    WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND status = 'scored'
      AND list_contains($texts::VARCHAR[], text_id)
), votes AS (
    SELECT text_id, criterion_id, value, count(*) AS n FROM answers GROUP BY text_id, criterion_id, value
), cells AS (
    SELECT text_id, criterion_id, max(n) / sum(n) AS agreement, sum(n) AS samples
    FROM votes GROUP BY text_id, criterion_id
)
SELECT text_id, min(agreement) AS confidence
FROM cells
GROUP BY text_id
HAVING min(samples) >= 2
ORDER BY text_id;
