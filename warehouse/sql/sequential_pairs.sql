-- Each text's figure under side A and side B of a sequential A/B, for texts scored on both sides:
-- the mean text score and the pass verdict (1/0; NULL where the rubric has no pass threshold).
-- Params: $corpus, $rubric_a, $judge_a, $rubric_b, $judge_b, $only (restrict to $texts), $texts.
SELECT a.text_id, a.score AS score_a, b.score AS score_b,
       a.passed::INTEGER AS pass_a, b.passed::INTEGER AS pass_b
FROM text_scores a
JOIN text_scores b ON b.corpus_id = a.corpus_id AND b.text_id = a.text_id
 AND b.rubric_hash = $rubric_b AND b.judge_hash = $judge_b
WHERE a.corpus_id = $corpus AND a.rubric_hash = $rubric_a AND a.judge_hash = $judge_a
  AND a.score IS NOT NULL AND b.score IS NOT NULL
  AND (NOT $only OR list_contains($texts::VARCHAR[], a.text_id));
