-- A run starts: its parameters (never secrets), what it covers and what it reuses.
-- The first run of a judgment set gives every current text of the corpus a row in the analytics
-- (coverage 0 until judged): those texts are marked for the refresh (warehouse/analytics.py).
INSERT INTO stale_texts
SELECT corpus_id, text_id FROM texts
WHERE corpus_id = $corpus AND removed_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM runs WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge);
INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples, parameters, status,
                  planned_cells, skipped_cells, started_at, finished_at, message, estimated_usd, budget_usd,
                  layout, layout_reason, minimum_prompt_tokens)
VALUES ($run, $corpus, $rubric, $judge, $model, $strategy, $samples, $parameters, 'running',
        $planned, $skipped, current_timestamp, NULL, NULL, $estimated_usd, $budget_usd,
        $layout, $layout_reason, $minimum_prompt_tokens);
