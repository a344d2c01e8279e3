-- A run ends: completed | stopped | waiting | failed, with the reason when it did not complete.
UPDATE runs SET status = $status, finished_at = current_timestamp, message = $message WHERE run_id = $run;
