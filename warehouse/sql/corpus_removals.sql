-- How many of a corpus's live texts an ingest of $parquet would mark removed, and out of how many
-- (load_corpus.sql's last step): steps.refuse_mass_removal refuses a share over its limit.
SELECT count(*) AS live,
       count(*) FILTER (WHERE text_id NOT IN (SELECT text_id FROM read_parquet($parquet))) AS removed
FROM texts
WHERE corpus_id = $corpus AND removed_at IS NULL;
