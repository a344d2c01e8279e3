-- What a CI gate (tasks/stats/gate.py) checks for one judgment set over a corpus's current texts:
-- texts, texts scored, the mean text score, the pass rate of the scored texts, and coverage (the
-- mean of each current text's scored / planned criteria; a text never judged counts 0, so a run
-- that judged half the corpus has coverage 0.5). Params: $corpus, $rubric, $judge.
SELECT count(*) AS texts,
       count(s.score) AS scored_texts,
       exact_mean(s.score) AS overall,  -- the stated precision (rubrics/scoring.py: SCORE_DIGITS): one outcome whatever the thread order
       avg(s.passed::INT) FILTER (WHERE s.score IS NOT NULL) AS pass_rate,
       coalesce(avg(coalesce(s.coverage, 0)), 0) AS coverage
FROM current_texts t
LEFT JOIN text_scores s ON s.corpus_id = t.corpus_id AND s.text_id = t.text_id
     AND s.rubric_hash = $rubric AND s.judge_hash = $judge
WHERE t.corpus_id = $corpus;
