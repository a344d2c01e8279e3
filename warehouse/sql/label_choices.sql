-- What the labelling page's start form offers: each corpus and rubric a run scored, newest first.
SELECT s.corpus_id, r.rubric_id AS rubric, max(s.started_at) AS latest
FROM runs s JOIN rubrics r USING (rubric_hash)
GROUP BY ALL
ORDER BY latest DESC, s.corpus_id, rubric;
