-- A stored A/B comparison of these sides, if the corpus's analytics have not moved since it was
-- computed (and, given $options, computed with those options). Params: $corpus, $sides, $options.
SELECT r.result, r.options, r.seconds
FROM ab_results r
JOIN analytics_versions v ON v.corpus_id = r.corpus_id AND v.version = r.corpus_version
WHERE r.corpus_id = $corpus AND r.sides = $sides AND ($options IS NULL OR r.options = $options);
