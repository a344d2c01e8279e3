-- Cells this run's rubric version shares with another version: a call unit with the same
-- fingerprint (what was sent, how answers are read: completions.unit_hash, rubric_units.unit_hash) was judged ok
-- for the same text version, judge and sample, so its completion and judgments are copied under
-- this version's cell key instead of asking again. A copy costs nothing (attempts and tokens 0,
-- left out of run_summary's calls) and names the cell it came from (adopted_from). A failed cell
-- of this version is replaced by an adopted one. Run inside one transaction; the table `adopted`
-- holds what was copied. Params: $corpus, $rubric, $judge, $samples, $run.
CREATE OR REPLACE TEMP TABLE adopted AS
WITH genres AS (
    SELECT rubric_hash, list(DISTINCT genre_key) FILTER (WHERE genre_key <> '') AS names
    FROM rubric_units GROUP BY rubric_hash
),
units AS (
    SELECT u.rubric_hash, u.genre_key, u.unit_id, u.unit_hash, g.names FROM rubric_units u JOIN genres g USING (rubric_hash)
)
-- one source per cell (several versions may share the unit)
SELECT new_key AS cell_key, source_key FROM (
    SELECT sha256(concat_ws('|', p.text_id, p.text_sha256, m.unit_id, $rubric, $judge, p.sample, m.unit_hash)) AS new_key,
           p.cell_key AS source_key, p.created_at
    FROM texts t
    JOIN units m ON m.rubric_hash = $rubric
     AND m.genre_key = CASE WHEN list_contains(m.names, t.genre) THEN t.genre ELSE '' END
    JOIN completions p ON p.corpus_id = t.corpus_id AND p.text_id = t.text_id AND p.rubric_hash <> $rubric
     AND p.unit_hash = m.unit_hash AND p.judge_hash = $judge AND p.status = 'ok' AND p.sample < $samples
     AND p.text_sha256 = text_version(t.sha256, t.input, t.context, t.genre)
    WHERE t.corpus_id = $corpus AND t.removed_at IS NULL
)
QUALIFY row_number() OVER (PARTITION BY new_key ORDER BY created_at DESC, source_key) = 1;

DELETE FROM adopted WHERE EXISTS (SELECT 1 FROM completions c WHERE c.cell_key = adopted.cell_key AND c.status = 'ok');
-- This run, and the runs whose failed cells the adopted ones replace, are marked for the analytics refresh.
INSERT INTO stale_runs
SELECT $run UNION SELECT DISTINCT run_id FROM completions WHERE cell_key IN (SELECT cell_key FROM adopted);
DELETE FROM judgments WHERE cell_key IN (SELECT cell_key FROM adopted);
DELETE FROM completions WHERE cell_key IN (SELECT cell_key FROM adopted);

INSERT INTO completions BY NAME
SELECT p.* REPLACE (a.cell_key AS cell_key, $run AS run_id, $rubric AS rubric_hash, 0 AS attempts,
                    0 AS prompt_tokens, 0 AS completion_tokens, 0 AS cached_tokens, NULL AS latency_ms, NULL AS queue_ms,
                    p.cell_key AS adopted_from)
FROM adopted a JOIN completions p ON p.cell_key = a.source_key;

INSERT INTO judgments BY NAME
SELECT j.* REPLACE (a.cell_key AS cell_key, $run AS run_id, $rubric AS rubric_hash, j.cell_key AS adopted_from)
FROM adopted a JOIN judgments j ON j.cell_key = a.source_key;

-- The adopted texts are marked for the analytics refresh (warehouse/analytics.py).
INSERT INTO stale_texts SELECT DISTINCT c.corpus_id, c.text_id FROM adopted a JOIN completions c ON c.cell_key = a.cell_key;
