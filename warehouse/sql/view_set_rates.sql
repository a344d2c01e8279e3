-- The viewer's judgment-set page: how often each disqualifier and each pattern fires.
-- Params: $corpus, $rubric, $judge.
SELECT 'disqualifier' AS kind, disqualifier_id AS id, count(DISTINCT text_id) AS texts
FROM disqualifier_hits
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge
GROUP BY disqualifier_id
UNION ALL
SELECT 'pattern', pattern_id, texts_hit
FROM pattern_summary
WHERE corpus_id = $corpus AND rubric_hash = $rubric
ORDER BY kind, texts DESC, id;
