-- A run starts: its parameters (never secrets), what it covers and what it reuses.
INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples, parameters, status,
                  planned_cells, skipped_cells, started_at, finished_at, message, estimated_usd, budget_usd)
VALUES ($run, $corpus, $rubric, $judge, $model, $strategy, $samples, $parameters, 'running',
        $planned, $skipped, current_timestamp, NULL, NULL, $estimated_usd, $budget_usd);
