-- Texts per score bin (20 bins over [0, 1]) under A and under B, for the report's distribution plot.
SELECT bin / 20 AS bin_start, count(*) FILTER (WHERE side = 'a') AS texts_a, count(*) FILTER (WHERE side = 'b') AS texts_b
FROM (SELECT 'a' AS side, greatest(0, least(floor(score_a * 20), 19)) AS bin FROM cmp_texts WHERE score_a IS NOT NULL
      UNION ALL
      SELECT 'b', greatest(0, least(floor(score_b * 20), 19)) FROM cmp_texts WHERE score_b IS NOT NULL)
GROUP BY bin ORDER BY bin;
