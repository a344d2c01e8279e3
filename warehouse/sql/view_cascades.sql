-- The viewer's cascade page: each judge cascade of a corpus (`score --cascade`) with its split (the
-- texts each level decided: cheap, strong, calibration) and its calls and dollars against asking
-- the strong judge alone (cascade_split, cascade_costs). Params: $corpus.
SELECT k.cascade_id, k.cheap_model, k.strong_model, k.agreement, k.delta, k.threshold, s.level, s.texts, s.scored,
       c.cheap_calls, c.strong_calls, c.strong_only_calls, c.cheap_usd, c.strong_usd, c.strong_only_usd
FROM cascades k
JOIN cascade_split s ON s.cascade_id = k.cascade_id
LEFT JOIN cascade_costs c ON c.cascade_id = k.cascade_id
WHERE k.corpus_id = $corpus
ORDER BY k.cascade_id, s.level;
