-- The judge setups that scored one rubric version on a corpus, for choosing one: model, sampling
-- settings, strategy (from the run's parameters), runs and the latest run's time.
-- Params: $corpus, $rubric (a rubric hash).
SELECT judge_hash, any_value(model) AS model,
       any_value(parameters ->> 'strategy') AS strategy,
       any_value(parameters ->> 'temperature') AS temperature,
       any_value(parameters ->> 'seed') AS seed,
       count(*) AS runs, max(started_at) AS latest
FROM runs
WHERE corpus_id = $corpus AND rubric_hash = $rubric
GROUP BY judge_hash
ORDER BY latest DESC;
