-- Text-level A/B summary: coverage, means, mean delta, Pearson and Spearman (Pearson of mid-ranks,
-- so ties get their average rank as in scipy), decision flips and disqualification rates. Means and
-- correlations are rounded to the stated precision (rubrics/scoring.py: SCORE_DIGITS): a sum of doubles
-- adds in thread order, and the same judgments must give the same figures bit for bit (#49).
WITH paired AS (
    SELECT * FROM cmp_texts WHERE score_a IS NOT NULL AND score_b IS NOT NULL
),
ranked AS (
    SELECT score_a, score_b,
           rank() OVER (ORDER BY score_a) + (count(*) OVER (PARTITION BY score_a) - 1) / 2 AS rank_a,
           rank() OVER (ORDER BY score_b) + (count(*) OVER (PARTITION BY score_b) - 1) / 2 AS rank_b
    FROM paired
)
SELECT (SELECT count(*) FROM cmp_texts) AS texts_both_sides,
       (SELECT count(*) FROM paired) AS texts_paired,
       (SELECT exact_mean(score_a) FROM paired) AS mean_a,
       (SELECT exact_mean(score_b) FROM paired) AS mean_b,
       (SELECT exact_mean(delta) FROM paired) AS mean_delta,
       (SELECT round(corr(score_a, score_b), 9) FROM paired) AS pearson,
       (SELECT round(corr(rank_a, rank_b), 9) FROM ranked) AS spearman,
       (SELECT count(*) FILTER (WHERE passed_a AND NOT passed_b) FROM paired) AS pass_to_fail,
       (SELECT count(*) FILTER (WHERE NOT passed_a AND passed_b) FROM paired) AS fail_to_pass,
       (SELECT count(*) FILTER (WHERE label_a IS DISTINCT FROM label_b) FROM paired) AS label_changes,
       (SELECT avg(dq_a::INT) FROM cmp_texts) AS dq_rate_a,
       (SELECT avg(dq_b::INT) FROM cmp_texts) AS dq_rate_b;
