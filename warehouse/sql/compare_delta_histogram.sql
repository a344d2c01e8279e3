-- The paired deltas' distribution (B's text score less A's, unit scale) in 20 bins of 0.1 over
-- [-1, 1], for the A/B page's histogram. Deltas rounded to 9 decimals first, as every score is
-- compared (rubrics/scoring.fixed), so a delta of exactly 0 always falls in the bin starting at 0.
SELECT bin / 10 AS bin_start, (bin + 1) / 10 AS bin_end, count(*) AS texts
FROM (SELECT greatest(-10, least(floor(round(delta, 9) * 10), 9)) AS bin FROM cmp_texts WHERE delta IS NOT NULL)
GROUP BY bin ORDER BY bin;
