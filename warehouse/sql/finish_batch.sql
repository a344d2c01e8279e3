-- A batch's answers are landed; `online_cells` counts the cells judged online instead.
UPDATE batches SET status = $status, online_cells = $online_cells, finished_at = current_timestamp
WHERE batch_id = $batch;
