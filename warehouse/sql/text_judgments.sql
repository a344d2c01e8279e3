-- `rubricflow show`: one text's judgments, criterion by criterion. Params: $corpus, $text.
SELECT r.rubric_id, j.criterion_id, j.sample, j.value, round(j.unit_score, 3) AS unit, j.status,
       coalesce(j.reason, j.rationale) AS rationale_or_reason
FROM judgments j JOIN rubrics r USING (rubric_hash)
WHERE j.corpus_id = $corpus AND j.text_id = $text
ORDER BY r.rubric_id, j.criterion_id, j.sample;
