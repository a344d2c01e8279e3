-- One judge setup's unit scores of a rubric version on a corpus, per text and criterion, with the
-- night its newest judgment of the text landed (the time strata of a judge-succession bridge) and
-- whether the text is in the nightly canary (the lowest sha256 of the id, as canary_sample.sql).
-- Params: $corpus, $rubric (hash), $judge (hash), $canary (the canary's size).
WITH nights AS (
    SELECT c.text_id, max(r.started_at)::DATE AS night
    FROM completions c JOIN runs r USING (run_id)
    WHERE c.corpus_id = $corpus AND c.rubric_hash = $rubric AND c.judge_hash = $judge
    GROUP BY c.text_id
),
canary AS (
    SELECT text_id FROM texts WHERE corpus_id = $corpus ORDER BY sha256(text_id), text_id LIMIT $canary
)
SELECT s.text_id, s.criterion_id, s.unit_score, n.night, s.text_id IN (SELECT text_id FROM canary) AS canary
FROM criterion_scores s LEFT JOIN nights n USING (text_id)
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge AND s.unit_score IS NOT NULL
ORDER BY s.criterion_id, s.text_id;
