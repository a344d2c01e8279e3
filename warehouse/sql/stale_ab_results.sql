-- Stored A/B comparisons on a run's corpus whose analytics moved since they were computed. Params: $run.
SELECT r.corpus_id, r.sides, r.options
FROM ab_results r
LEFT JOIN analytics_versions v ON v.corpus_id = r.corpus_id
WHERE r.corpus_id = (SELECT corpus_id FROM runs WHERE run_id = $run) AND r.corpus_version IS DISTINCT FROM v.version;
