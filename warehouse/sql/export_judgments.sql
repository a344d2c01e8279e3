-- `rubricflow export judgments`: every judgment of the judgment set on the corpus's current texts
-- (one row per text, criterion and sample): the value as the judge gave it, the unit score, the
-- rationale and evidence, and the run that landed it. Param: $run.
SELECT j.run_id, r.model, j.corpus_id, rb.rubric_id || '@' || rb.version AS rubric, j.rubric_hash, j.judge_hash,
       j.text_id, j.criterion_id, j.sample, j.value::VARCHAR AS value, j.unit_score, j.status, j.reason,
       j.rationale, j.evidence, j.evidence_verified, j.warnings
FROM runs r
JOIN current_judgments j ON j.corpus_id = r.corpus_id AND j.rubric_hash = r.rubric_hash AND j.judge_hash = r.judge_hash
JOIN rubrics rb ON rb.rubric_hash = j.rubric_hash
WHERE r.run_id = $run
ORDER BY j.text_id, j.criterion_id, j.sample;
