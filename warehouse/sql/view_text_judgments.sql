-- The viewer's text page: every judgment of the text's current version, under every rubric version
-- and judge, with the call that made it. Params: $corpus, $text. The completions are filtered by the
-- text as well as joined by cell: the filter skips the row groups of other texts (20M judgments:
-- 50 ms -> 6 ms), the join alone read every completion.
SELECT r.rubric_id || '@' || r.version AS rubric, j.rubric_hash, j.judge_hash, c.model, j.criterion_id, j.sample,
       j.value, j.unit_score, j.status, j.reason, j.rationale, j.evidence, j.evidence_verified, j.warnings,
       c.raw_response, c.attempts, c.finish_reason, c.output_mode, c.error, j.adopted_from, c.created_at
FROM current_judgments j
JOIN completions c ON c.cell_key = j.cell_key
JOIN rubrics r ON r.rubric_hash = j.rubric_hash
WHERE j.corpus_id = $corpus AND j.text_id = $text AND c.corpus_id = $corpus AND c.text_id = $text
ORDER BY rubric, j.judge_hash, j.criterion_id, j.sample;
