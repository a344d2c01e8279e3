-- The viewer's texts page: one page of a judgment set's texts, filtered in SQL. Every filter is
-- optional (NULL: not applied). Params: $corpus, $rubric, $judge, $search (substring of the text or
-- id), $label, $criterion with $min_unit / $max_unit (its unit score), $disqualifier, $pattern,
-- $limit, $offset.
SELECT s.text_id, s.score, s.label, s.passed, s.disqualifiers, s.coverage,
       left(t.text, 240) AS excerpt, count(*) OVER () AS matching
FROM text_scores s
JOIN texts t ON t.corpus_id = s.corpus_id AND t.text_id = s.text_id
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge
  AND ($search IS NULL OR contains(lower(t.text), lower($search)) OR contains(s.text_id, $search))
  AND ($label IS NULL OR s.label = $label)
  AND ($disqualifier IS NULL OR list_contains(s.disqualifiers, $disqualifier))
  AND ($criterion IS NULL OR EXISTS (
      SELECT 1 FROM criterion_scores c
      WHERE c.corpus_id = s.corpus_id AND c.rubric_hash = s.rubric_hash AND c.judge_hash = s.judge_hash
        AND c.text_id = s.text_id AND c.criterion_id = $criterion
        AND c.unit_score BETWEEN coalesce($min_unit, 0) AND coalesce($max_unit, 1)))
  AND ($pattern IS NULL OR EXISTS (
      SELECT 1 FROM pattern_hits h
      WHERE h.corpus_id = s.corpus_id AND h.rubric_hash = s.rubric_hash AND h.text_id = s.text_id
        AND h.pattern_id = $pattern AND h.hits > 0))
ORDER BY s.text_id
LIMIT $limit OFFSET $offset;
