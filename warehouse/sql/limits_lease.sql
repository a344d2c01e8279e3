-- PostgreSQL (psycopg): lease up to max(wanted, chunk) from a key's bucket in one statement. The
-- bucket refills at %(rate)s per second on the database's clock (machines need no synced clocks),
-- holds at most %(capacity)s, and the row lock orders concurrent leases.
WITH bucket AS (
    SELECT key,
           least(%(capacity)s, level + greatest(0, extract(epoch FROM clock_timestamp()) - stamp) * %(rate)s) AS level
    FROM rubricflow_quota WHERE key = %(key)s FOR UPDATE
)
UPDATE rubricflow_quota q
SET level = bucket.level - least(bucket.level, greatest(%(wanted)s, %(chunk)s)),
    stamp = extract(epoch FROM clock_timestamp())
FROM bucket WHERE q.key = bucket.key
RETURNING least(bucket.level, greatest(%(wanted)s, %(chunk)s)) AS granted
