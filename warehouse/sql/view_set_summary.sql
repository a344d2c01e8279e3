-- The viewer's judgment-set page: the score distribution in ten bins, labels and pass rate.
-- Params: $corpus, $rubric, $judge.
SELECT least(floor(score * 10), 9)::INTEGER AS bin, count(*) AS texts,
       count(*) FILTER (WHERE passed) AS passed, count(*) FILTER (WHERE len(disqualifiers) > 0) AS disqualified
FROM text_scores
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge AND score IS NOT NULL
GROUP BY bin
ORDER BY bin;
