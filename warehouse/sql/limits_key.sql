-- PostgreSQL (psycopg): a key's bucket, empty, if it has none yet.
INSERT INTO rubricflow_quota (key, level, stamp)
VALUES (%(key)s, 0, extract(epoch FROM clock_timestamp()))
ON CONFLICT (key) DO NOTHING
