-- The pairwise summary of one rubric version on a corpus, each judge named by its model.
-- Params: $corpus, $rubric (a rubric hash).
SELECT s.judge_hash, j.model || ' (' || left(s.judge_hash, 8) || ')' AS judge, s.criterion_id, s.pairs, s.consistency,
       s.position_bias, s.a_share, s.b_share, s.tie_share, s.labelled, s.accuracy, s.accuracy_no_ties
FROM pairwise_summary s
JOIN (SELECT judge_hash, any_value(model) AS model FROM runs
      WHERE corpus_id = $corpus AND rubric_hash = $rubric GROUP BY judge_hash) j USING (judge_hash)
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric
ORDER BY judge, s.criterion_id;
