-- The held-out agreement `improve evolve` keeps a candidate by: Pearson's r between a judgment set's
-- text scores and the human target on the held-out texts.
-- Params: $corpus, $rubric, $judge, $raters, $label (the label criterion), $texts (the held-out text ids).
WITH target AS (SELECT text_id, human FROM label_target($corpus, $raters, $label))
-- r rounded to 9 decimals, as in evolve_disagreement.sql (the last bits are the parallel sums' order).
SELECT round(corr(s.score, t.human), 9) AS pearson, count(*) AS texts
FROM text_scores s
JOIN target t USING (text_id)
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge
  AND list_contains($texts, s.text_id) AND s.score IS NOT NULL;
