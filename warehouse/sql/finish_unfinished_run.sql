-- A run's end recorded only if nothing recorded one yet: an interrupt (Ctrl-C) that came during the
-- run's finish step, before or after finish_run.sql. Params: $run, $status, $message.
UPDATE runs SET status = $status, finished_at = current_timestamp, message = $message
WHERE run_id = $run AND status = 'running';
