-- The A/Bs `compare` stored on a corpus whose sides were each judged by one judge setup, with, per
-- side, the newest stitchable bridge from that judge on that rubric version (its new judge and
-- verdict): `rubricflow judge ab` restates them on the new judge's scale. Params: $corpus.
WITH stored AS (
    SELECT sides, sides::JSON -> 'a' -> 0 ->> 0 AS rubric_a, sides::JSON -> 'a' -> 0 ->> 1 AS judge_a,
           sides::JSON -> 'b' -> 0 ->> 0 AS rubric_b, sides::JSON -> 'b' -> 0 ->> 1 AS judge_b
    FROM ab_results
    WHERE corpus_id = $corpus AND json_array_length(sides::JSON -> 'a') = 1 AND json_array_length(sides::JSON -> 'b') = 1
),
bridges AS (
    SELECT rubric_hash, old_judge, arg_max(new_judge, created_at) AS new_judge, arg_max(verdict, created_at) AS verdict
    FROM judge_bridges WHERE corpus_id = $corpus AND stitchable GROUP BY ALL
)
SELECT s.rubric_a, s.judge_a, s.rubric_b, s.judge_b, ba.new_judge AS new_a, ba.verdict AS verdict_a,
       bb.new_judge AS new_b, bb.verdict AS verdict_b
FROM stored s
LEFT JOIN bridges ba ON ba.rubric_hash = s.rubric_a AND ba.old_judge = s.judge_a
LEFT JOIN bridges bb ON bb.rubric_hash = s.rubric_b AND bb.old_judge = s.judge_b
ORDER BY ALL;
