-- The recorded meta rounds of one co-evolution, in order. Param: $evolution.
SELECT *
FROM evolution_components
WHERE evolution_id = $evolution
ORDER BY round;
