-- The stored A/B comparisons (ab_results, kept by `compare`), newest first, for the viewer's A/B
-- page: each opens again by its sides' first rubric and judge hashes; `current` is false when a run
-- on the corpus finished since (opening it then computes it again). Params: $limit.
SELECT r.corpus_id,
       r.result ->> 'rubric_a' AS rubric_a,
       r.result ->> 'rubric_b' AS rubric_b,
       json_extract_string(r.sides, '$.a[0][0]') AS hash_a,
       json_extract_string(r.sides, '$.a[0][1]') AS judge_a,
       json_extract_string(r.sides, '$.b[0][0]') AS hash_b,
       json_extract_string(r.sides, '$.b[0][1]') AS judge_b,
       TRY_CAST(r.result -> 'summary' ->> 'texts_paired' AS BIGINT) AS texts_paired,
       TRY_CAST(r.result -> 'summary' ->> 'mean_delta' AS DOUBLE) AS mean_delta,
       r.computed_at,
       v.version IS NOT NULL AS current
FROM ab_results r
LEFT JOIN analytics_versions v ON v.corpus_id = r.corpus_id AND v.version = r.corpus_version
ORDER BY r.computed_at DESC
LIMIT $limit;
