-- Where an evolution ended: its best version, Pearson's r of the start and the best on the
-- validation texts (what rounds were accepted on) and on the test texts (read once, here).
-- Params: one per column.
UPDATE evolutions
SET best_hash = $best, validation_start = $validation_start, validation_best = $validation_best,
    test_start = $test_start, test_best = $test_best
WHERE evolution_id = $evolution;
