-- The trajectory checks' outcomes (check_results) as judgments of the run, like a judged criterion's:
-- value 1 (pass) or 0, the scale's score, what was found as the rationale. A text of the corpus that
-- is no transcript gets an unscored judgment saying so. A cell already landed (same text version,
-- rubric, judge) is not landed again. Params: $corpus, $rubric, $judge, $run.
CREATE OR REPLACE TEMP TABLE check_cells AS
SELECT sha256(concat_ws('|', t.text_id, text_version(t.sha256, t.input, t.context, t.genre), c.criterion_id,
                        $rubric, $judge, 'check')) AS cell_key,
       c.criterion_id, t.text_id, text_version(t.sha256, t.input, t.context, t.genre) AS text_sha256,
       r.passed, r.detail, r.unit_score
FROM texts t
CROSS JOIN (SELECT DISTINCT criterion_id FROM check_results) c
LEFT JOIN check_results r ON r.criterion_id = c.criterion_id AND r.text_id = t.text_id
WHERE t.corpus_id = $corpus AND t.removed_at IS NULL;

DELETE FROM check_cells c WHERE EXISTS (SELECT 1 FROM judgments j WHERE j.cell_key = c.cell_key);

INSERT INTO judgments BY NAME
SELECT cell_key, criterion_id, $run AS run_id, $corpus AS corpus_id, text_id, $rubric AS rubric_hash,
       $judge AS judge_hash, 0 AS sample,
       CASE WHEN passed IS NULL THEN NULL WHEN passed THEN '1' ELSE '0' END::JSON AS value,
       unit_score, coalesce(detail, 'not a transcript: a trajectory check has no messages to read') AS rationale,
       []::VARCHAR[] AS evidence, []::VARCHAR[] AS warnings,
       CASE WHEN passed IS NULL THEN 'unscored' ELSE 'scored' END AS status,
       CASE WHEN passed IS NULL THEN 'not a transcript' END AS reason, text_sha256
FROM check_cells
-- In text order: the analytics refresh recomputes texts in text order, batch by batch, and DuckDB
-- skips the row groups outside a batch's texts by their min/max; landed in hash order, every batch
-- read all of the run's judgments (1,000,000 transcripts: 100 batches x 9M judgments).
ORDER BY text_id, criterion_id;

INSERT INTO stale_texts SELECT DISTINCT $corpus, text_id FROM check_cells;
