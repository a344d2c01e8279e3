-- How many of a corpus's current texts are not one order of a pair (tasks/loaders/pairs.py writes a
-- pair text's `pair_id` and its `order`, ab or ba, into its metadata), out of how many: `rubricflow
-- pairwise` refuses a corpus with any before a call (its cells would be bought, no verdict come of
-- them). Params: $corpus.
SELECT count(*) AS texts,
       count(*) FILTER (WHERE coalesce(metadata->>'pair_id', '') = ''
                           OR coalesce(metadata->>'order', '') NOT IN ('ab', 'ba')) AS plain
FROM texts WHERE corpus_id = $corpus AND removed_at IS NULL;
