-- The stored documents of two rubric versions. Params: $a, $b (rubric hashes).
SELECT rubric_hash, document FROM rubrics WHERE rubric_hash IN ($a, $b);
