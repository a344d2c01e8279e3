-- step_count: the transcript's steps (assistant messages), tool calls or messages lie within
-- [$min, $max] (a bound not given is open). Params: $corpus, $criterion, $count_of, $min, $max,
-- $pass_score, $fail_score.
INSERT INTO check_results
WITH counts AS (
    SELECT transcript_id,
           CASE $count_of
               WHEN 'steps' THEN count(*) FILTER (WHERE role = 'assistant')
               WHEN 'tool_calls' THEN sum(coalesce(len(tool_calls), 0))
               ELSE count(*)
           END AS n
    FROM transcript_messages WHERE corpus_id = $corpus GROUP BY transcript_id
)
SELECT $criterion, transcript_id, n BETWEEN coalesce($min, 0) AND coalesce($max, 9223372036854775807),
       $count_of || ': ' || n,
       CASE WHEN n BETWEEN coalesce($min, 0) AND coalesce($max, 9223372036854775807) THEN $pass_score ELSE $fail_score END
FROM counts;
