-- The price a run was costed with (USD per million tokens); the last run's price of a model wins.
INSERT OR REPLACE INTO model_prices (model, input_per_mtok, output_per_mtok, cached_input_per_mtok, source)
VALUES ($model, $input_per_mtok, $output_per_mtok, $cached_input_per_mtok, $source);
