-- OpenAI chat JSONL (a `messages` list per line) read by DuckDB, not row by row in Python
-- (warehouse/chat_files.py): one row per transcript with its id, its canonical rendering (as
-- tasks/loaders/transcripts.render_message writes it), its messages normalised with each body's
-- md5, the tool schemas, the other fields as metadata, and `odd`: a line this path does not read as
-- (JSON allows space before a colon: `"content" : [` is content parts too, once stored as their raw JSON;
-- a name that is a number, an id that is true/false, or an is_error written as text ("False" too), the
-- two paths wrote differently: "True" and "true", an error and none; not an object: a tool schema's `"id": {`;
-- an OpenAI `refusal`, a `reasoning_content`, an audio reply's transcript or a call's `namespace`,
-- which only the row-by-row path reads)
-- the row-by-row path does (content parts, a legacy function_call, a bad role, no messages), which
-- sends the whole file to that path; the rendering's length and the message count, so the steps after
-- read neither the renderings nor the messages for them. Variables: source (the file), odd_pattern,
-- odd_fields, odd_numbers and spaces (chats_odd.sql).
WITH raw AS (
    SELECT json_extract_string(json, ['$.transcript_id', '$.text_id', '$.id', '$.session_id', '$.trace_id']) AS ids,
           json_transform(json, '{"messages": [{"role": "VARCHAR", "content": "VARCHAR",
               "tool_calls": [{"id": "VARCHAR", "function": {"name": "VARCHAR", "arguments": "VARCHAR"}}],
               "name": "VARCHAR", "tool_call_id": "VARCHAR", "is_error": "VARCHAR", "error": "VARCHAR",
               "step_id": "VARCHAR", "span_id": "VARCHAR", "timestamp": "VARCHAR", "created_at": "VARCHAR"}],
               "tools": "JSON", "genre": "VARCHAR"}') AS r,
           CASE WHEN len(list_filter(json_keys(json), lambda k: k NOT IN ('messages', 'tools', 'genre', 'transcript_id',
                    'text_id', 'id', 'session_id', 'trace_id'))) > 0
                THEN json_merge_patch(json, '{"messages": null, "tools": null, "genre": null, "transcript_id": null,
                    "text_id": null, "id": null, "session_id": null, "trace_id": null}') END AS extra,
           -- a line the pattern hits is looked at again without its tool schemas: a tool with a parameter
           -- named content or arguments ("properties": {"content": {...}}) sent a whole file row by row
           CASE WHEN regexp_matches(json, getvariable('odd_pattern'))
                THEN regexp_matches(CASE WHEN json_exists(json, '$.tools') THEN json_merge_patch(json, '{"tools": null}')
                                         ELSE json END, getvariable('odd_fields'))
                     OR regexp_matches(json, getvariable('odd_numbers'))  -- a schema's number too
                ELSE false END
           -- a key given twice in the line's own object (DuckDB keeps both in the metadata, Python the last)
           OR len(json_keys(json)) > len(list_distinct(json_keys(json)))
           -- tools written as JSON text (xLAM's datasets): the row-by-row path reads them (tools_of)
           OR json_type(json, '$.tools') = 'VARCHAR' AS odd_text
    FROM read_ndjson_objects(getvariable('source'), maximum_object_size = 16777216)
),
msgs AS (
    SELECT ids, r.genre, r.tools, extra, odd_text, list_transform(r.messages, lambda m, i: {
        'position': (i - 1)::INTEGER, 'role': m.role, 'body': coalesce(m.content, ''),
        'calls': list_transform(m.tool_calls,
                                lambda c: {'id': c.id, 'name': c.function.name, 'arguments': c.function.arguments}),
        'name': m.name, 'tool_call_id': m.tool_call_id,
        'is_error': CASE WHEN (lower(trim(coalesce(m.is_error, 'false'), getvariable('spaces'))) IN ('false', '0', '', 'null', '[]', '{}')
                               OR try_cast(trim(m.is_error, getvariable('spaces')) AS DOUBLE) = 0)
                          AND (lower(trim(coalesce(m.error, 'false'), getvariable('spaces'))) IN ('false', '0', '', 'null', '[]', '{}')
                               OR try_cast(trim(m.error, getvariable('spaces')) AS DOUBLE) = 0) THEN NULL ELSE true END,
        'step_id': m.step_id, 'span_id': m.span_id, 'ts': coalesce(m.timestamp, m.created_at)}) AS msgs
    FROM raw
),
named AS (
    SELECT *, flatten(list_transform(msgs, lambda m: list_transform(m.calls,
                  lambda c: {'id': c.id, 'name': c.name, 'at': m.position}))) AS names
    FROM msgs
),
rendered AS (
    SELECT *, array_to_string(list_transform(msgs, lambda m: concat('[M', m.position, '] ', m.role,
           CASE WHEN m.tool_call_id IS NOT NULL THEN concat(' (result of ', coalesce(list_last(list_filter(names,
                lambda c: c.id = m.tool_call_id AND c.at <= m.position)).name, '?'), ' #', m.tool_call_id,
                CASE WHEN m.is_error THEN ', failed' ELSE '' END, ')')
                WHEN m.is_error THEN ' (failed)' END,
           ': ', m.body,
           CASE WHEN len(m.calls) > 0 THEN array_to_string(list_transform(m.calls, lambda c: concat(chr(10), '  -> call ',
                c.name, '(', c.arguments, ') #', c.id)), '') END)), chr(10)) AS text
    FROM named
),
hashed AS (SELECT *, sha256(text) AS sha256 FROM rendered)
SELECT coalesce(nullif(ids[1], ''), nullif(ids[2], ''), nullif(ids[3], ''), nullif(ids[4], ''), nullif(ids[5], ''),
                left(sha256, 16)) AS text_id,
       text, sha256, len(text) AS text_chars, coalesce(len(msgs), 0)::INTEGER AS message_count,
       list_transform(msgs, lambda m: struct_insert(m, body_hash := md5(m.body))) AS msgs,
       CASE WHEN tools IS NULL OR tools::VARCHAR IN ('[]', '{}', 'null', 'false', '0', '""') THEN NULL
            ELSE tools::VARCHAR END AS tools_body,
       genre,
       extra::VARCHAR AS metadata,
       odd_text OR coalesce(len(msgs), 0) = 0
           OR len(list_filter(msgs, lambda m: m.role IS NULL
                  OR m.role NOT IN ('system', 'developer', 'user', 'assistant', 'tool', 'function')
                  OR len(list_filter(m.calls, lambda c: c.name IS NULL)) > 0)) > 0 AS odd
FROM hashed
