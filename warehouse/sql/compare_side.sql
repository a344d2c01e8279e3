-- One judgment set of one side of an A/B comparison, into the temp tables compare_pair.sql reads.
-- Run once per set (a side normally is one set). Filtering each set by equality lets DuckDB push
-- the filter into the views, so a warehouse of many versions costs only the two compared.
-- Params: $side ('a' | 'b'), $corpus, $rubric, $judge. Scores are rounded to 12 decimals so that
-- float noise from summing weights in another order is no delta and no rank difference.

CREATE TEMP TABLE IF NOT EXISTS cmp_side_texts (side VARCHAR, text_id VARCHAR, rubric_hash VARCHAR,
    judge_hash VARCHAR, latest TIMESTAMP, score DOUBLE, label VARCHAR, passed BOOLEAN, disqualified BOOLEAN);

CREATE TEMP TABLE IF NOT EXISTS cmp_side_criteria (side VARCHAR, text_id VARCHAR, criterion_id VARCHAR,
    latest TIMESTAMP, unit_score DOUBLE, passed BOOLEAN, scale_kind VARCHAR, unit_step DOUBLE);

INSERT INTO cmp_side_texts (side, text_id, rubric_hash, judge_hash, latest, score, label, passed, disqualified)
SELECT $side, t.text_id, t.rubric_hash, t.judge_hash,
       (SELECT max(started_at) FROM runs WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge),
       round(t.score, 12), t.label, t.passed, len(t.disqualifiers) > 0
FROM text_scores t
WHERE t.corpus_id = $corpus AND t.rubric_hash = $rubric AND t.judge_hash = $judge;

INSERT INTO cmp_side_criteria (side, text_id, criterion_id, latest, unit_score, passed, scale_kind, unit_step)
SELECT $side, s.text_id, s.criterion_id,
       (SELECT max(started_at) FROM runs WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge),
       round(s.unit_score, 12), s.passed, c.scale_kind, c.unit_step
FROM criterion_scores s
JOIN criteria c ON c.rubric_hash = s.rubric_hash AND c.criterion_id = s.criterion_id
WHERE s.corpus_id = $corpus AND s.rubric_hash = $rubric AND s.judge_hash = $judge AND s.unit_score IS NOT NULL;
