-- The viewer's texts page: one page of a judgment set's texts, filtered in SQL. Every filter is
-- optional (NULL: not applied). Params: $corpus, $rubric, $judge, $search (substring of the text or
-- id), $label, $criterion with $min_unit / $max_unit (its unit score), $disqualifier, $pattern,
-- $limit, $offset. The texts themselves are read for the search and for the page's rows only.
WITH matching AS (
    SELECT s.corpus_id, s.text_id, s.score, s.label, s.passed, s.disqualifiers, s.coverage
    FROM text_scores s
    WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge
      AND ($search IS NULL OR contains(s.text_id, $search) OR EXISTS (
          SELECT 1 FROM texts t
          WHERE t.corpus_id = s.corpus_id AND t.text_id = s.text_id AND contains(lower(t.text), lower($search))))
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
),
page AS (
    SELECT *, count(*) OVER () AS matching FROM matching ORDER BY text_id LIMIT $limit OFFSET $offset
)
SELECT p.text_id, p.score, p.label, p.passed, p.disqualifiers, p.coverage, left(t.text, 240) AS excerpt, p.matching
FROM page p
JOIN texts t ON t.corpus_id = p.corpus_id AND t.text_id = p.text_id
ORDER BY p.text_id;
