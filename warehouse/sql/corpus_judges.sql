-- The judgment sets (rubric version x judge setup) that scored a corpus, with the rubric's id and
-- version: `calibrate` checks the corpus's own judgments by default. Params: $corpus.
SELECT s.rubric_hash, s.judge_hash, r.rubric_id, r.version
FROM (SELECT DISTINCT rubric_hash, judge_hash FROM runs WHERE corpus_id = $corpus) s
JOIN rubrics r USING (rubric_hash)
ORDER BY r.rubric_id, r.version, s.judge_hash;
