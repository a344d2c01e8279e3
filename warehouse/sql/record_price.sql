-- The price a run is costed with (USD per million tokens); the last one recorded wins.
INSERT OR REPLACE INTO model_prices (model, input_per_mtok, output_per_mtok)
VALUES ($model, $input_per_mtok, $output_per_mtok);
