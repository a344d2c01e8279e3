-- Every registered rubric version as id@version, by hash.
SELECT rubric_hash, rubric_id || '@' || version AS name FROM rubrics;
