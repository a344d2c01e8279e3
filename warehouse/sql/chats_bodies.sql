-- A staged chat file's bodies.parquet rows: each body once by its hash, the tool schemas among them.
-- Variables: staged.
SELECT body_hash, any_value(body) AS body FROM (
    SELECT m.body_hash, m.body FROM (SELECT unnest(msgs) AS m FROM read_parquet(getvariable('staged')))
    UNION ALL
    SELECT md5(tools_body), tools_body FROM read_parquet(getvariable('staged')) WHERE tools_body IS NOT NULL
) GROUP BY body_hash;
