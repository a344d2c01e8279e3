-- The decision-label flip matrix: texts per (label under A, label under B). A text a side left
-- without a score is '(unscored)' there; one it scored under a rubric with no decision labels (or
-- none that applies) is '(no label)', as a run's label table says.
SELECT CASE WHEN score_a IS NULL THEN '(unscored)' ELSE coalesce(label_a, '(no label)') END AS label_a,
       CASE WHEN score_b IS NULL THEN '(unscored)' ELSE coalesce(label_b, '(no label)') END AS label_b,
       count(*) AS texts
FROM cmp_texts
GROUP BY ALL
ORDER BY label_a, label_b;
