-- A second read of a chat JSONL file, by the fields the columnar path reads (chats_stage.sql): a key
-- given twice among them fails it (DuckDB's reader keeps the first, Python's json the last: a message
-- with two `content`s was judged on the first one way, the last the other), and `shared_ids` counts the
-- lines with a message whose tool calls share an id (a result naming it could answer either call:
-- the row-by-row path refuses it). Every column is named in the select: one left out is not read.
-- Variables: source (the file).
SELECT count(*) FILTER (WHERE list_bool_or(list_transform(messages, lambda m:
           len(list_filter(m.tool_calls, lambda c: c.id IS NOT NULL))
               > len(list_distinct(list_transform(m.tool_calls, lambda c: c.id)))))) AS shared_ids,
       count(transcript_id) + count(text_id) + count(id) + count(session_id) + count(trace_id) + count(genre)
           + count(tools) + count(messages) AS read
FROM read_json(getvariable('source'), format = 'newline_delimited', maximum_object_size = 16777216, columns = {
    'transcript_id': 'VARCHAR', 'text_id': 'VARCHAR', 'id': 'VARCHAR', 'session_id': 'VARCHAR',
    'trace_id': 'VARCHAR', 'genre': 'VARCHAR', 'tools': 'JSON',
    'messages': 'STRUCT(role VARCHAR, content VARCHAR,
        tool_calls STRUCT(id VARCHAR, "function" STRUCT(name VARCHAR, arguments VARCHAR))[], name VARCHAR,
        tool_call_id VARCHAR, is_error VARCHAR, error VARCHAR, step_id VARCHAR, span_id VARCHAR,
        "timestamp" VARCHAR, created_at VARCHAR)[]'});
