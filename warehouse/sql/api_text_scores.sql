-- `Warehouse.text_scores`: every text's verdict, narrowed by any of corpus, rubric (id, id@version or
-- hash prefix) and judge hash (NULL: any). Params: $corpus, $rubric, $judge.
SELECT corpus_id, rubric_id, version, text_id, score, label, passed, disqualifiers,
       scored_criteria, planned_criteria, coverage, rubric_hash, judge_hash
FROM text_scores
WHERE ($corpus IS NULL OR corpus_id = $corpus)
  AND ($rubric IS NULL OR rubric_id = $rubric OR rubric_id || '@' || version = $rubric
       OR starts_with(rubric_hash, $rubric))
  AND ($judge IS NULL OR judge_hash = $judge)
ORDER BY corpus_id, rubric_id, version, judge_hash, text_id;
