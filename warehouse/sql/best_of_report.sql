-- Per judge: the sets a best-of-n rubric judged (one call each), agreement with the human's pick
-- where a set has one, and how often the response shown first won (about 1/n when position
-- plays no part). Params: $corpus, $rubric (a rubric hash).
WITH sets AS (
    SELECT judge_hash, set_id, any_value(winner) AS winner, any_value(label) AS label
    FROM best_of_candidates WHERE corpus_id = $corpus AND rubric_hash = $rubric GROUP BY ALL
)
SELECT j.model || ' (' || left(s.judge_hash, 8) || ')' AS judge, count(*) AS sets,
       count(s.winner) AS with_winner, count(s.label) AS labelled,
       avg((s.winner = s.label)::INT) FILTER (WHERE s.label IS NOT NULL) AS accuracy,
       avg((s.winner = 1)::INT) AS first_shown_won
FROM sets s
JOIN (SELECT judge_hash, any_value(model) AS model FROM runs
      WHERE corpus_id = $corpus AND rubric_hash = $rubric GROUP BY judge_hash) j USING (judge_hash)
GROUP BY ALL ORDER BY judge;
