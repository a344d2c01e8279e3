-- tool_used / tool_not_used / tool_sequence: over each transcript's tool calls in order (message
-- position, then the call's place in its message). In order: the names as a string of
-- chr(30) || name || chr(31) matched by $sequence (steps.check_params makes it); exact: the same list;
-- any order: every name named is called. Params: $corpus, $criterion, $kind, $tool, $tools,
-- $sequence, $pass_score, $fail_score.
INSERT INTO check_results
WITH calls AS (
    SELECT transcript_id, position, generate_subscripts(tool_calls, 1) AS k, unnest(tool_calls).name AS name
    FROM transcript_messages WHERE corpus_id = $corpus AND tool_calls IS NOT NULL
),
seq AS (SELECT transcript_id, list(name ORDER BY position, k) AS tools FROM calls GROUP BY transcript_id),
outcome AS (
    SELECT tr.transcript_id, coalesce(s.tools, []::VARCHAR[]) AS tools,
           CASE $kind
               WHEN 'tool_used' THEN list_contains(coalesce(s.tools, []::VARCHAR[]), $tool)
               WHEN 'tool_not_used' THEN NOT list_contains(coalesce(s.tools, []::VARCHAR[]), $tool)
               WHEN 'exact' THEN coalesce(s.tools, []::VARCHAR[]) = $tools::VARCHAR[]
               WHEN 'any_order' THEN list_has_all(coalesce(s.tools, []::VARCHAR[]), $tools::VARCHAR[])
               ELSE regexp_matches(
                   coalesce(chr(30) || array_to_string(s.tools, chr(31) || chr(30)) || chr(31), ''),
                   $sequence)
           END AS passed
    FROM transcripts tr LEFT JOIN seq s ON s.transcript_id = tr.transcript_id
    WHERE tr.corpus_id = $corpus
)
SELECT $criterion, transcript_id, passed,
       'tools called: ' || CASE WHEN len(tools) = 0 THEN 'none' ELSE left(array_to_string(tools, ', '), 300) END,
       CASE WHEN passed THEN $pass_score ELSE $fail_score END
FROM outcome;
