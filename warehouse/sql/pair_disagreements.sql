-- The pairs where the two orders or the judges disagree, with both rationales, for the report.
-- Params: $corpus, $rubric, $limit.
WITH judged AS (
    SELECT pair_id, criterion_id, count(DISTINCT verdict) AS verdicts, bool_and(consistent) AS consistent
    FROM pair_verdicts WHERE corpus_id = $corpus AND rubric_hash = $rubric GROUP BY pair_id, criterion_id
)
SELECT v.pair_id, v.criterion_id, left(v.judge_hash, 8) AS judge, v.label, v.verdict_ab, v.verdict_ba, v.verdict,
       v.rationale_ab, v.rationale_ba
FROM pair_verdicts v JOIN judged USING (pair_id, criterion_id)
WHERE v.corpus_id = $corpus AND v.rubric_hash = $rubric AND (NOT judged.consistent OR judged.verdicts > 1)
ORDER BY v.pair_id, v.criterion_id, judge
LIMIT $limit;
