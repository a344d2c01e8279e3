-- At most 2,000 of the paired texts, the same ones every time, for the report's scatter plot.
SELECT score_a, score_b FROM cmp_texts WHERE delta IS NOT NULL USING SAMPLE reservoir(2000 ROWS) REPEATABLE (7);
