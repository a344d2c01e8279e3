-- The criteria a corpus already has: those of every rubric a run scored it with, and its labels'
-- (a wide label file's column named like a rater's or a text's is read as one of these).
-- Params: $corpus.
SELECT criterion_id FROM criteria WHERE rubric_hash IN (SELECT rubric_hash FROM runs WHERE corpus_id = $corpus)
UNION
SELECT criterion_id FROM labels WHERE corpus_id = $corpus;
