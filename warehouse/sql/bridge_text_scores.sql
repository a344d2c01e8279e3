-- One judge setup's text scores (the composite, on the unit scale) of a rubric version on a corpus:
-- a judge-succession bridge maps the series' own figure too. Params: $corpus, $rubric, $judge.
SELECT text_id, score FROM text_scores
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND score IS NOT NULL
ORDER BY text_id;
