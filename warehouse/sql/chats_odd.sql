-- What marks a chat JSONL line the columnar path would read otherwise than the row-by-row one
-- (chats_stage.sql's odd_text): content parts or arguments as objects, a legacy function_call,
-- messages as text, a name or an id written as a number or true/false, is_error as text, words kept
-- outside content (a refusal, reasoning_content, an audio reply) and a call's namespace.
SET VARIABLE odd_pattern = '"(content|arguments)"\s*:\s*[\[{]|"tool_calls"\s*:\s*[{"]|"function_call"|"messages"\s*:\s*"'
    || '|"(name|tool_call_id|step_id|span_id)"\s*:\s*[-0-9tf]|"is_error"\s*:\s*"|"[a-z_]*id"\s*:\s*(true|false)'
    || '|"(refusal|reasoning_content|namespace)"\s*:\s*"|"audio"\s*:\s*\{';
-- ASCII whitespace, as Python's str.strip(" \t\n\r\f\v") trims an error flag written as text
SET VARIABLE spaces = ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13);
