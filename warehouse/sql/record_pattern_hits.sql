-- One text's count of one pattern, counted in Python (a pattern RE2 cannot run).
INSERT INTO pattern_hits (corpus_id, text_id, text_sha256, rubric_hash, pattern_id, hits)
VALUES (?, ?, ?, ?, ?, ?);
