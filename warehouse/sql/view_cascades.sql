-- The viewer's cascade page: each judge cascade of a corpus (`score --cascade`) with its split (the
-- texts each level decided: cheap, strong, calibration, human, pending-human) and its calls and
-- dollars against asking the strong judge alone (cascade_split, cascade_costs). Params: $corpus.
SELECT k.cascade_id, k.rubric_hash, k.cheap_model, k.strong_model, k.strong_judge, k.agreement, k.delta, k.threshold,
       k.human_below, s.level, s.texts, s.scored,
       c.cheap_calls, c.strong_calls, c.strong_only_calls, c.cheap_usd, c.strong_usd, c.strong_only_usd
FROM cascades k
JOIN cascade_split s ON s.cascade_id = k.cascade_id
LEFT JOIN cascade_costs c ON c.cascade_id = k.cascade_id
WHERE k.corpus_id = $corpus
ORDER BY k.cascade_id, s.level;
