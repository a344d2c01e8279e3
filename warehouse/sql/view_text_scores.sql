-- The viewer's text page: the text's score under every rubric version and judge (human raters'
-- scores as judge 'label:<rater>'), from the materialised text scores. Params: $corpus, $text.
SELECT rubric_id || '@' || version AS rubric, rubric_hash, judge_hash, score, label, passed, disqualifiers,
       scored_criteria, planned_criteria, coverage
FROM text_scores
WHERE corpus_id = $corpus AND text_id = $text
ORDER BY rubric, judge_hash;
