-- The judgment sets (rubric version x judge) one side of a comparison names: an exact rubric hash,
-- a hash prefix of 8 or more characters, a rubric id or id@version. Params: $corpus, $judge (or
-- NULL: any), $judge_prefix (a judge hash prefix, or NULL: any), $exact (or NULL), $ref.
SELECT DISTINCT r.rubric_hash, r.judge_hash, rb.rubric_id, rb.version
FROM runs r JOIN rubrics rb USING (rubric_hash)
WHERE r.corpus_id = $corpus AND ($judge IS NULL OR r.judge_hash = $judge)
  AND ($judge_prefix IS NULL OR starts_with(r.judge_hash, $judge_prefix))
  AND CASE WHEN $exact IS NOT NULL THEN r.rubric_hash = $exact
           ELSE (length($ref) >= 8 AND starts_with(r.rubric_hash, $ref))
                OR rb.rubric_id = $ref OR rb.rubric_id || '@' || rb.version = $ref END
ORDER BY rb.version, r.rubric_hash, r.judge_hash;
