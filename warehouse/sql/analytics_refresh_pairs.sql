-- Part of a refresh (analytics_refresh.sql, which leaves refresh_scope), run only when the
-- scope holds a pair's text (warehouse/analytics.py): with none, every statement here is a no-op.

-- Pairwise verdicts of the pairs a scoped text belongs to. A pair's two texts are `<pair_id>:ab`
-- and `<pair_id>:ba` (tasks/loaders/pairs.py), so a scoped text's partner is recomputed with it;
-- each order's verdict is read in the pair's own terms (in order ba, slot a is response b), and
-- an inconsistent pair is a tie.
CREATE OR REPLACE TEMP TABLE refresh_pair_texts AS
SELECT t.corpus_id, t.text_id, t.removed_at, text_version(t.sha256, t.input, t.context, t.genre) AS version,
       json_extract_string(t.metadata, '$.pair_id') AS pair_id,
       json_extract_string(t.metadata, '$.order') AS pair_order,
       json_extract_string(t.metadata, '$.label') AS label,
       json_extract_string(t.metadata, '$.system_a') AS system_a,
       json_extract_string(t.metadata, '$.system_b') AS system_b
FROM texts t
JOIN (SELECT DISTINCT s.corpus_id, regexp_replace(s.text_id, ':(ab|ba)$', '') || o.suffix AS text_id
      FROM refresh_scope s, (VALUES (':ab'), (':ba')) o(suffix)
      WHERE regexp_matches(s.text_id, ':(ab|ba)$')) p ON p.corpus_id = t.corpus_id AND p.text_id = t.text_id
WHERE t.metadata LIKE '%"pair_id"%';
DELETE FROM mat_pair_verdicts m USING refresh_pair_texts p
WHERE m.corpus_id = p.corpus_id AND (m.text_id_ab = p.text_id OR m.text_id_ba = p.text_id);
INSERT INTO mat_pair_verdicts BY NAME
WITH own AS (
    SELECT j.corpus_id, j.rubric_hash, j.judge_hash, j.criterion_id, j.text_id, j.rationale,
           p.pair_id, p.pair_order, p.label, p.system_a, p.system_b,
           json_extract_string(j.value, '$') AS slot,  -- as written: a = the response shown first
           CASE WHEN p.pair_order = 'ba' AND slot = 'a' THEN 'b' WHEN p.pair_order = 'ba' AND slot = 'b' THEN 'a'
                ELSE slot END AS verdict
    FROM judgments j
    JOIN refresh_pair_texts p ON p.corpus_id = j.corpus_id AND p.text_id = j.text_id AND p.version = j.text_sha256
    WHERE j.status = 'scored' AND p.removed_at IS NULL AND current_rendering(j.rubric_hash, j.unit_hash)
)
SELECT ab.corpus_id, ab.rubric_hash, ab.judge_hash, ab.pair_id, ab.criterion_id, ab.label, ab.system_a, ab.system_b,
       ab.verdict AS verdict_ab, ba.verdict AS verdict_ba,
       ab.verdict = ba.verdict AS consistent,
       ab.slot = ba.slot AND ab.slot <> 'tie' AS follows_position,
       CASE WHEN ab.verdict = ba.verdict THEN ab.verdict ELSE 'tie' END AS verdict,
       ab.rationale AS rationale_ab, ba.rationale AS rationale_ba,
       ab.text_id AS text_id_ab, ba.text_id AS text_id_ba
FROM own ab
JOIN own ba ON ba.corpus_id = ab.corpus_id AND ba.rubric_hash = ab.rubric_hash AND ba.judge_hash = ab.judge_hash
 AND ba.pair_id = ab.pair_id AND ba.criterion_id = ab.criterion_id AND ba.pair_order = 'ba'
WHERE ab.pair_order = 'ab';

DROP TABLE refresh_pair_texts;
