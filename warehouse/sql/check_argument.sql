-- argument: some call to $tool has, at JSON path $path of its arguments, a value equal to $equals
-- (JSON text) or, without it, matching $matches (RE2). Params: $corpus, $criterion, $tool, $path,
-- $equals, $matches, $pass_score, $fail_score.
INSERT INTO check_results
WITH calls AS (
    SELECT transcript_id, unnest(tool_calls) AS call
    FROM transcript_messages WHERE corpus_id = $corpus AND tool_calls IS NOT NULL
),
found AS (
    SELECT transcript_id, count(*) AS calls,
           coalesce(bool_or(CASE WHEN $equals IS NOT NULL
                                 THEN json_extract(try_cast(call.arguments AS JSON), $path) = json($equals)
                                 ELSE regexp_matches(json_extract_string(try_cast(call.arguments AS JSON), $path), $matches)
                            END), false) AS passed
    FROM calls WHERE call.name = $tool GROUP BY transcript_id
)
SELECT $criterion, tr.transcript_id, coalesce(f.passed, false),
       CASE WHEN f.calls IS NULL THEN 'no call to ' || $tool
            ELSE f.calls || ' call(s) to ' || $tool || CASE WHEN f.passed THEN ', one with ' ELSE ', none with ' END
                 || $path || CASE WHEN $equals IS NOT NULL THEN ' = ' || $equals ELSE ' ~ ' || $matches END
       END,
       CASE WHEN coalesce(f.passed, false) THEN $pass_score ELSE $fail_score END
FROM transcripts tr LEFT JOIN found f ON f.transcript_id = tr.transcript_id
WHERE tr.corpus_id = $corpus;
