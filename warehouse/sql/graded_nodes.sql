-- A graded tree checked node by node: each internal node's score as the grader gave it (a label)
-- beside the rubric's aggregation of the grader's leaf grades (node_scores over labels, judge
-- 'label:<rater>'). Params: $corpus, $rubric, $rater, $text.
SELECT n.node_id, g.weight, l.score AS graded, n.value AS aggregated,
       abs(l.score - n.value) < 1e-9 AS agrees
FROM node_scores n
JOIN labels l ON l.corpus_id = n.corpus_id AND l.text_id = n.text_id AND l.criterion_id = n.node_id AND l.rater = $rater
JOIN rubric_nodes g ON g.rubric_hash = n.rubric_hash AND g.node_id = n.node_id
WHERE n.corpus_id = $corpus AND n.rubric_hash = $rubric AND n.judge_hash = 'label:' || $rater AND n.text_id = $text
  AND NOT g.is_leaf
ORDER BY n.node_id;
