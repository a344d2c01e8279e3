-- Texts per disqualifier in the judgment set a run scored. Param: $run.
SELECT d.disqualifier_id, d.kind, count(DISTINCT d.text_id) AS texts
FROM disqualifier_hits d
JOIN runs r ON r.corpus_id = d.corpus_id AND r.rubric_hash = d.rubric_hash AND r.judge_hash = d.judge_hash
WHERE r.run_id = $run
GROUP BY ALL ORDER BY texts DESC;
