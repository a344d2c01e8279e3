-- PostgreSQL (psycopg): one token bucket per provider key and limit, shared by every run, process and
-- machine that leases from it. `key` is a hash of endpoint, key hash and limit name, never the key.
CREATE TABLE IF NOT EXISTS rubricflow_quota (
    key TEXT PRIMARY KEY,
    level DOUBLE PRECISION NOT NULL,
    stamp DOUBLE PRECISION NOT NULL
)
