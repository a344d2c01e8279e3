-- Cells landed ok for the same content (text version), rubric, judge and sample under another text
-- id or another corpus: the same text ingested under a second corpus id, or again under new ids
-- (an export renumbered), asks the same questions, so its cells are copies of those, under the key
-- the plan gives this text (plan_cells.sql: its own key, or that key with `|corpus|<id>` appended
-- when another corpus owns it), with this corpus's and text's ids. A copy costs nothing (attempts
-- and tokens 0) and names the cell it came from (adopted_from); a failed cell of this text is
-- replaced by one. Only cells under their owner's key are sources (a copy of a copy would carry
-- another key); of several sources the least key is copied. Run inside one transaction; the table
-- `adopted_corpus` holds what was copied. Params: $corpus, $rubric, $judge, $samples, $run.
CREATE OR REPLACE TEMP TABLE adopted_corpus AS
WITH sources AS (
    SELECT t.text_id, p.cell_key AS source_key,
           sha256(concat_ws('|', t.text_id, p.text_sha256, p.unit_id, p.rubric_hash, p.judge_hash, p.sample,
                            p.unit_hash)) AS own_key
    FROM texts t
    JOIN completions p ON p.text_sha256 = text_version(t.sha256, t.input, t.context, t.genre)
     AND (p.corpus_id <> t.corpus_id OR p.text_id <> t.text_id) AND p.rubric_hash = $rubric AND p.judge_hash = $judge
     AND p.sample < $samples AND p.status = 'ok'
     AND p.cell_key = sha256(concat_ws('|', p.text_id, p.text_sha256, p.unit_id, p.rubric_hash, p.judge_hash, p.sample,
                                     p.unit_hash))  -- NULL (landed before fingerprints): left out, as the key was
    WHERE t.corpus_id = $corpus AND t.removed_at IS NULL
      -- a night's canary (tasks/pipeline/nightly.load_canary) exists to judge its texts again: never copied
      AND NOT EXISTS (SELECT 1 FROM corpora k WHERE k.corpus_id = $corpus AND k.source LIKE 'canary of %')
),
keyed AS (  -- the key plan_cells.sql gives the cell (its `keyed` step)
    SELECT s.text_id, s.source_key,
           CASE WHEN EXISTS (SELECT 1 FROM completions o WHERE o.cell_key = s.own_key AND o.corpus_id <> $corpus)
                  OR EXISTS (SELECT 1 FROM completions m WHERE m.cell_key = sha256(s.own_key || '|corpus|' || $corpus))
                THEN sha256(s.own_key || '|corpus|' || $corpus) ELSE s.own_key END AS cell_key
    FROM sources s
)
SELECT cell_key, any_value(text_id) AS text_id, min(source_key) AS source_key
FROM keyed WHERE cell_key <> source_key GROUP BY cell_key;

DELETE FROM adopted_corpus
WHERE EXISTS (SELECT 1 FROM completions c WHERE c.cell_key = adopted_corpus.cell_key AND c.status = 'ok');
INSERT INTO stale_runs
SELECT $run UNION SELECT DISTINCT run_id FROM completions WHERE cell_key IN (SELECT cell_key FROM adopted_corpus);
DELETE FROM judgments WHERE cell_key IN (SELECT cell_key FROM adopted_corpus);
DELETE FROM completions WHERE cell_key IN (SELECT cell_key FROM adopted_corpus);

INSERT INTO completions BY NAME
SELECT p.* REPLACE (a.cell_key AS cell_key, $run AS run_id, $corpus AS corpus_id, a.text_id AS text_id, 0 AS attempts,
                    0 AS prompt_tokens, 0 AS completion_tokens, 0 AS cached_tokens, NULL AS latency_ms, NULL AS queue_ms,
                    p.cell_key AS adopted_from)
FROM adopted_corpus a JOIN completions p ON p.cell_key = a.source_key;

INSERT INTO judgments BY NAME
SELECT j.* REPLACE (a.cell_key AS cell_key, $run AS run_id, $corpus AS corpus_id, a.text_id AS text_id,
                    j.cell_key AS adopted_from)
FROM adopted_corpus a JOIN judgments j ON j.cell_key = a.source_key;

INSERT INTO stale_texts SELECT DISTINCT $corpus, a.text_id FROM adopted_corpus a;
