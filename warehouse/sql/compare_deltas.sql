-- Distinct deltas and their counts (text level: criterion_id NULL; then per criterion): the paired
-- bootstrap resamples these counts, which is exact and far cheaper than resampling millions of rows.
SELECT NULL::VARCHAR AS criterion_id, round(delta, 9) AS delta, count(*) AS n
FROM cmp_texts WHERE delta IS NOT NULL GROUP BY ALL
UNION ALL
SELECT criterion_id, round(unit_b - unit_a, 9), count(*)
FROM cmp_criteria GROUP BY ALL;
