-- A corpus's messages as a scoped criterion's units are cut from them (warehouse/scopes.py):
-- ordered by transcript and position. Params: $corpus.
SELECT transcript_id, position, role, content, tool_calls, tool_call_id, is_error
FROM messages
WHERE corpus_id = $corpus
ORDER BY transcript_id, position;
