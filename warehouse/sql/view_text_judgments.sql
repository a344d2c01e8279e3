-- The viewer's text page: every judgment of the text's current version ($version, from
-- view_text.sql), under every rubric version and judge, with the call that made it. Params:
-- $corpus, $text, $version. Both tables are filtered by the text, not only joined by cell: the
-- filters skip the row groups of other texts (20M judgments: 50 ms -> 6 ms), and filtering by the
-- version instead of joining current_judgments leaves less to plan (-1.5 ms of 7).
SELECT r.rubric_id || '@' || r.version AS rubric, j.rubric_hash, j.judge_hash, c.model, j.criterion_id, j.sample,
       j.value, j.unit_score, j.status, j.reason, j.rationale, j.evidence, j.evidence_verified, j.warnings,
       c.raw_response, c.attempts, c.finish_reason, c.output_mode, c.error, j.adopted_from, c.created_at
FROM judgments j
JOIN completions c ON c.cell_key = j.cell_key
JOIN rubrics r ON r.rubric_hash = j.rubric_hash
WHERE j.corpus_id = $corpus AND j.text_id = $text AND j.text_sha256 = $version
  AND c.corpus_id = $corpus AND c.text_id = $text AND c.text_sha256 = $version
ORDER BY rubric, j.judge_hash, j.criterion_id, j.sample;
