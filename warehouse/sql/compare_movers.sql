-- The texts whose score moved most, with each side's rationales (criterion: rationale, in order).
WITH top AS (
    SELECT * FROM cmp_texts WHERE delta <> 0 ORDER BY abs(delta) DESC, text_id LIMIT $top
),
why AS (
    SELECT t.text_id, j.rubric_hash, j.judge_hash,
           string_agg(j.criterion_id || ': ' || coalesce(j.rationale, j.reason, ''), ' | ' ORDER BY j.criterion_id, j.sample) AS rationale
    FROM top t JOIN judgments j ON j.corpus_id = $corpus AND j.text_id = t.text_id
     AND ((j.rubric_hash = t.rubric_a AND j.judge_hash = t.judge_a) OR (j.rubric_hash = t.rubric_b AND j.judge_hash = t.judge_b))
    GROUP BY ALL
)
SELECT t.text_id, t.score_a, t.score_b, t.delta, t.label_a, t.label_b, wa.rationale AS rationale_a, wb.rationale AS rationale_b
FROM top t
LEFT JOIN why wa ON wa.text_id = t.text_id AND wa.rubric_hash = t.rubric_a AND wa.judge_hash = t.judge_a
LEFT JOIN why wb ON wb.text_id = t.text_id AND wb.rubric_hash = t.rubric_b AND wb.judge_hash = t.judge_b
ORDER BY abs(t.delta) DESC, t.text_id;
