-- One best-of-n run's candidates (`Warehouse.best_of`). Params: $corpus, $rubric, $judge (hashes).
SELECT set_id, candidate, system, score, winner, is_winner, label
FROM best_of_candidates
WHERE corpus_id = $corpus AND rubric_hash = $rubric AND judge_hash = $judge
ORDER BY set_id, candidate;
