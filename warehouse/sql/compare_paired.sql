-- The texts both sides scored, as (score_a, score_b) (after compare_pair.sql), for Kendall's tau.
SELECT score_a, score_b FROM cmp_texts WHERE delta IS NOT NULL;
