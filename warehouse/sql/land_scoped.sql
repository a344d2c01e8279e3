-- A scoped criterion's unit judgments (the unit corpus's, by its unit rubric, scope_reducers.unit_rubric, and the judge $unit_judge) reduced per transcript by the
-- criterion's reducer (scope_reducers: criterion_id, reducer) and landed as judgments of the run, as a
-- judged criterion's are: any = the best unit, all / min = the worst, mean = their mean, last = the last
-- unit's. Every unit's evidence is kept. A transcript with no matching unit gets an unscored judgment
-- saying so. A cell already landed is not landed again. Params: $corpus, $units, $unit_judge, $rubric, $judge, $run.
CREATE OR REPLACE TEMP TABLE scoped_units AS
SELECT (t.metadata::JSON)->>'transcript_id' AS transcript_id, j.criterion_id, r.reducer,
       ((t.metadata::JSON)->>'position')::INTEGER AS position, j.value, j.unit_score, j.evidence, j.evidence_verified, j.warnings
FROM judgments j
JOIN texts t ON t.corpus_id = $units AND t.text_id = j.text_id
JOIN scope_reducers r ON r.criterion_id = j.criterion_id AND r.unit_rubric = j.rubric_hash
WHERE j.corpus_id = $units AND j.judge_hash = $unit_judge AND j.sample = 0
  AND j.status = 'scored' AND j.unit_score IS NOT NULL AND t.removed_at IS NULL;

CREATE OR REPLACE TEMP TABLE scoped_reduced AS
SELECT u.transcript_id, u.criterion_id, u.reducer, count(*) AS units,
       CASE u.reducer WHEN 'any' THEN max(u.unit_score) WHEN 'mean' THEN avg(u.unit_score)
            WHEN 'last' THEN arg_max(u.unit_score, u.position) ELSE min(u.unit_score) END AS unit_score,
       CASE u.reducer WHEN 'any' THEN arg_max(u.value, u.unit_score) WHEN 'mean' THEN to_json(avg(u.unit_score))
            WHEN 'last' THEN arg_max(u.value, u.position) ELSE arg_min(u.value, u.unit_score) END AS value,
       flatten(list(u.evidence ORDER BY u.position)) AS evidence,
       flatten(list(u.warnings ORDER BY u.position)) AS warnings, bool_and(u.evidence_verified) AS evidence_verified,
       string_agg('M' || u.position || ' ' || round(u.unit_score, 3), ', ' ORDER BY u.position) AS detail
FROM scoped_units u
GROUP BY u.transcript_id, u.criterion_id, u.reducer;

CREATE OR REPLACE TEMP TABLE scoped_cells AS
SELECT sha256(concat_ws('|', t.text_id, text_version(t.sha256, t.input, t.context, t.genre), c.criterion_id,
                        $rubric, $judge, 'scoped')) AS cell_key,
       c.criterion_id, c.reducer, t.text_id, text_version(t.sha256, t.input, t.context, t.genre) AS text_sha256,
       r.units, r.unit_score, r.value, r.evidence, r.evidence_verified, r.warnings, r.detail
FROM texts t
CROSS JOIN scope_reducers c
LEFT JOIN scoped_reduced r ON r.criterion_id = c.criterion_id AND r.transcript_id = t.text_id
WHERE t.corpus_id = $corpus AND t.removed_at IS NULL;

DELETE FROM scoped_cells c WHERE EXISTS (SELECT 1 FROM judgments j WHERE j.cell_key = c.cell_key);

INSERT INTO judgments BY NAME
SELECT cell_key, criterion_id, $run AS run_id, $corpus AS corpus_id, text_id, $rubric AS rubric_hash,
       $judge AS judge_hash, 0 AS sample, value, unit_score,
       CASE WHEN units IS NULL THEN 'no unit of this criterion''s scope in the transcript'
            ELSE reducer || ' of ' || units || ' unit(s): ' || detail END AS rationale,
       coalesce(evidence, []::VARCHAR[]) AS evidence, evidence_verified, coalesce(warnings, []::VARCHAR[]) AS warnings,
       CASE WHEN units IS NULL THEN 'unscored' ELSE 'scored' END AS status,
       CASE WHEN units IS NULL THEN 'no matching unit' END AS reason, text_sha256
FROM scoped_cells;

INSERT INTO stale_texts SELECT DISTINCT $corpus, text_id FROM scoped_cells;
