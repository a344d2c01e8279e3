-- The recorded rounds of one evolution, in order. Param: $evolution.
SELECT *
FROM evolution_rounds
WHERE evolution_id = $evolution
ORDER BY round;
