-- Per criterion: mean unit-score delta, exact and within-one agreement, quadratic weighted kappa,
-- and the discordant pass/fail counts McNemar's test needs.
-- QWK in closed form: with weights (i-j)^2 the observed disagreement is mean((a-b)^2) and the
-- chance disagreement is E[a^2] + E[b^2] - 2 E[a] E[b] (the margins' product), so
-- kappa = 1 - observed / chance. Codes on a linear scale (unit scores) give the same kappa as levels.
SELECT criterion_id, count(*) AS n,
       exact_mean(unit_a) AS mean_a, exact_mean(unit_b) AS mean_b, exact_mean(unit_b - unit_a) AS mean_delta,
       avg((abs(unit_a - unit_b) < 1e-9)::INT) AS exact_agreement,
       avg((abs(unit_a - unit_b) <= unit_step + 1e-9)::INT) AS within_one,
       round(1 - avg((unit_a - unit_b) ^ 2)
           / nullif(avg(unit_a ^ 2) + avg(unit_b ^ 2) - 2 * avg(unit_a) * avg(unit_b), 0), 9) AS qwk,
       count(*) FILTER (WHERE passed_a AND NOT passed_b) AS pass_to_fail,
       count(*) FILTER (WHERE NOT passed_a AND passed_b) AS fail_to_pass,
       bool_and(is_binary) AS is_binary
FROM cmp_criteria
GROUP BY criterion_id
ORDER BY criterion_id;
