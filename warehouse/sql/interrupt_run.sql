-- A run whose process ended without finishing it (killed, crashed, the machine stopped).
UPDATE runs
SET status = 'interrupted', finished_at = current_timestamp,
    message = 'its process ended before the run finished; a later run loaded what it had landed and planned the rest'
WHERE run_id = $run AND status = 'running';
