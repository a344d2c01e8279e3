-- The viewer's text page: the patterns of every rubric that judged the text, to highlight their
-- hits (RE2 patterns, flags inlined). Params: $corpus, $text.
SELECT DISTINCT p.pattern_id, p.regex, p.engine
FROM pattern_hits h
JOIN rubric_patterns p ON p.rubric_hash = h.rubric_hash AND p.pattern_id = h.pattern_id
WHERE h.corpus_id = $corpus AND h.text_id = $text AND h.hits > 0
ORDER BY p.pattern_id;
