-- error_results: at most $max (0 when not given) tool results are errors: marked so by the source
-- (is_error), or, with $matches, whose text matches it (RE2). Params: $corpus, $criterion, $matches,
-- $max, $pass_score, $fail_score.
INSERT INTO check_results
WITH results AS (
    SELECT m.transcript_id, m.is_error, m.body_hash FROM transcript_messages m
    WHERE m.corpus_id = $corpus AND m.role IN ('tool', 'function')  -- a legacy function_call's result too
),
errors AS (
    SELECT r.transcript_id,
           count(*) FILTER (WHERE coalesce(r.is_error, false)
                               OR ($matches IS NOT NULL AND regexp_matches(b.body, coalesce($matches, '')))) AS n
    FROM results r LEFT JOIN message_bodies b ON $matches IS NOT NULL AND b.body_hash = r.body_hash
    GROUP BY r.transcript_id
)
SELECT $criterion, tr.transcript_id, coalesce(e.n, 0) <= coalesce($max, 0), 'error results: ' || coalesce(e.n, 0),
       CASE WHEN coalesce(e.n, 0) <= coalesce($max, 0) THEN $pass_score ELSE $fail_score END
FROM transcripts tr LEFT JOIN errors e ON e.transcript_id = tr.transcript_id
WHERE tr.corpus_id = $corpus;
