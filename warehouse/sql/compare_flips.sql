-- The decision-label flip matrix: texts per (label under A, label under B).
SELECT coalesce(label_a, '(unscored)') AS label_a, coalesce(label_b, '(unscored)') AS label_b, count(*) AS texts
FROM cmp_texts
GROUP BY ALL
ORDER BY label_a, label_b;
