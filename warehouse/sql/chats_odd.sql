-- What marks a chat JSONL line the columnar path would read otherwise than the row-by-row one
-- (chats_stage.sql's odd_text): content parts or arguments as objects, a legacy function_call,
-- messages as text, a name or an id written as a number or true/false, is_error as text, words kept
-- outside content (a refusal, reasoning as reasoning_content, reasoning or reasoning_details, an audio
-- reply) and a call's namespace.
SET VARIABLE odd_fields = '"(content|arguments)"\s*:\s*[\[{]|"tool_calls"\s*:\s*[{"]|"function_call"|"messages"\s*:\s*"'
    || '|"(name|tool_call_id|step_id|span_id)"\s*:\s*[-0-9tf]|"is_error"\s*:\s*"|"[a-z_]*id"\s*:\s*(true|false)'
    || '|"(refusal|reasoning_content|reasoning|namespace)"\s*:\s*"|"reasoning_details"\s*:\s*\[|"audio"\s*:\s*\{';
-- And a number DuckDB writes otherwise than Python's json, a key's value anywhere (the tool schemas
-- too): with an exponent, 17 digits before its point or 4 zeros after it (an id 1e20 was
-- "100000000000000000000.0", Python's "1e+20"; 1e400 stayed "1e400", Python's "Infinity"), or of 300
-- digits (past 4,300 Python refuses the row). Not one inside a string (its key's quote escaped, as in
-- a tool result's JSON text): that reads alike both ways.
SET VARIABLE odd_numbers = '[^\\]"\s*:\s*-?([0-9]+(\.[0-9]+)?[eE][-+]?[0-9]|[0-9]{17,}\.|0\.0000|[0-9]{300})';
-- The first look, for every line: either, a number's key quote escaped or not (the escape checked
-- only where this hits: the check costs as much as the rest of the pattern).
SET VARIABLE odd_pattern = getvariable('odd_fields')
    || '|"\s*:\s*-?([0-9]+(\.[0-9]+)?[eE][-+]?[0-9]|[0-9]{17,}\.|0\.0000|[0-9]{300})';
-- ASCII whitespace, as Python's str.strip(" \t\n\r\f\v") trims an error flag written as text
SET VARIABLE spaces = ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13);
