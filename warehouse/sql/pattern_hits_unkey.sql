-- A warehouse made before pattern_hits lost its primary key (001_schema.sql): the table rebuilt
-- without it (DuckDB cannot drop a key in place), one row per key kept. Run in one transaction.
CREATE TABLE pattern_hits_unkeyed AS SELECT * FROM pattern_hits;
DROP TABLE pattern_hits;
ALTER TABLE pattern_hits_unkeyed RENAME TO pattern_hits;
