-- What a command's runs have cost so far, at the prices in model_prices (run_costs; a run that landed
-- nothing cost nothing). Params: $runs.
SELECT coalesce(sum(usd), 0) AS usd FROM run_costs WHERE list_contains($runs::VARCHAR[], run_id);
