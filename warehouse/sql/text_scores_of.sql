-- `rubricflow show`: one text's scores under every rubric version and judge. Params: $corpus, $text.
SELECT rubric_id, version, left(judge_hash, 8) AS judge, round(score, 3) AS score, label, passed,
       disqualifiers, round(coverage, 3) AS coverage
FROM text_scores
WHERE corpus_id = $corpus AND text_id = $text;
