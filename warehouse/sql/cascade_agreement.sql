-- Whether the cheap and the strong judge agree on each text both scored: the same pass/fail verdict
-- (the same label where the rubric has no pass threshold).
-- Params: $corpus, $rubric, $cheap, $strong, $texts.
SELECT a.text_id,
       CASE WHEN a.passed IS NULL AND b.passed IS NULL THEN a.label IS NOT DISTINCT FROM b.label
            ELSE a.passed IS NOT DISTINCT FROM b.passed END AS agree
FROM text_scores a
JOIN text_scores b ON b.corpus_id = a.corpus_id AND b.text_id = a.text_id AND b.rubric_hash = a.rubric_hash
 AND b.judge_hash = $strong
WHERE a.corpus_id = $corpus AND a.rubric_hash = $rubric AND a.judge_hash = $cheap
  AND a.score IS NOT NULL AND b.score IS NOT NULL AND list_contains($texts::VARCHAR[], a.text_id);
