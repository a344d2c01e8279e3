-- final_message: the transcript's last assistant message matches $matches and not $not_matches (RE2;
-- either may be NULL). A transcript with no assistant message fails. Params: $corpus, $criterion,
-- $matches, $not_matches, $pass_score, $fail_score.
INSERT INTO check_results
WITH final AS (
    SELECT transcript_id, arg_max(body_hash, position) AS body_hash
    FROM transcript_messages WHERE corpus_id = $corpus AND role = 'assistant' GROUP BY transcript_id
),
outcome AS (
    SELECT tr.transcript_id, b.body,
           coalesce(($matches IS NULL OR regexp_matches(b.body, coalesce($matches, '')))
                    AND ($not_matches IS NULL OR NOT regexp_matches(b.body, coalesce($not_matches, ''))), false) AS passed
    FROM transcripts tr
    LEFT JOIN final f ON f.transcript_id = tr.transcript_id
    LEFT JOIN message_bodies b ON b.body_hash = f.body_hash
    WHERE tr.corpus_id = $corpus
)
SELECT $criterion, transcript_id, passed,
       CASE WHEN body IS NULL THEN 'no assistant message' ELSE 'final message: ' || left(body, 200) END,
       CASE WHEN passed THEN $pass_score ELSE $fail_score END
FROM outcome;
