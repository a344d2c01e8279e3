-- Disqualifier and pattern-hit rates under A and B over the texts both sides cover, by id.
WITH dq AS (
    SELECT 'a' AS side, d.disqualifier_id AS id, d.text_id
    FROM cmp_texts t JOIN disqualifier_hits d ON d.corpus_id = $corpus AND d.text_id = t.text_id
     AND d.rubric_hash = t.rubric_a AND d.judge_hash = t.judge_a
    UNION
    SELECT 'b', d.disqualifier_id, d.text_id
    FROM cmp_texts t JOIN disqualifier_hits d ON d.corpus_id = $corpus AND d.text_id = t.text_id
     AND d.rubric_hash = t.rubric_b AND d.judge_hash = t.judge_b
),
hits AS (
    SELECT 'a' AS side, h.pattern_id AS id, h.text_id
    FROM cmp_texts t JOIN pattern_hits h ON h.corpus_id = $corpus AND h.text_id = t.text_id AND h.rubric_hash = t.rubric_a
    WHERE h.hits > 0
    UNION ALL
    SELECT 'b', h.pattern_id, h.text_id
    FROM cmp_texts t JOIN pattern_hits h ON h.corpus_id = $corpus AND h.text_id = t.text_id AND h.rubric_hash = t.rubric_b
    WHERE h.hits > 0
),
n AS (SELECT count(*) AS texts FROM cmp_texts)
SELECT kind, id, count(*) FILTER (WHERE side = 'a') / any_value(n.texts) AS rate_a,
       count(*) FILTER (WHERE side = 'b') / any_value(n.texts) AS rate_b
FROM (SELECT 'disqualifier' AS kind, * FROM dq UNION ALL SELECT 'pattern', * FROM hits), n
GROUP BY kind, id
ORDER BY kind, abs(rate_b - rate_a) DESC, id;
