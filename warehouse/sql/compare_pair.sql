-- Pair the two sides of an A/B comparison (loaded by compare_side.sql, one row per text and side),
-- text by text and criterion by criterion.

CREATE OR REPLACE TEMP TABLE cmp_texts AS
WITH side AS (SELECT * FROM cmp_side_texts)
SELECT a.text_id, a.score AS score_a, b.score AS score_b, round(b.score - a.score, 9) AS delta,
       a.label AS label_a, b.label AS label_b, a.passed AS passed_a, b.passed AS passed_b,
       a.disqualified AS dq_a, b.disqualified AS dq_b,
       a.rubric_hash AS rubric_a, a.judge_hash AS judge_a, b.rubric_hash AS rubric_b, b.judge_hash AS judge_b
FROM side a JOIN side b ON a.text_id = b.text_id AND a.side = 'a' AND b.side = 'b';

-- Criteria are matched by id; only criteria both versions scored for a text are paired.
CREATE OR REPLACE TEMP TABLE cmp_criteria AS
WITH side AS (SELECT * FROM cmp_side_criteria)
SELECT a.criterion_id, a.text_id, a.unit_score AS unit_a, b.unit_score AS unit_b,
       a.passed AS passed_a, b.passed AS passed_b,
       a.scale_kind = 'binary' AND b.scale_kind = 'binary' AS is_binary,
       CASE WHEN a.unit_step = b.unit_step THEN a.unit_step END AS unit_step
FROM side a JOIN side b ON a.text_id = b.text_id AND a.criterion_id = b.criterion_id AND a.side = 'a' AND b.side = 'b';

DROP TABLE cmp_side_texts;
DROP TABLE cmp_side_criteria;
