-- One meta round of a co-evolution, inserted or replaced whole (recorded when proposed and again when
-- decided). Params: one per column but created_at, which is kept from the first write.
INSERT OR REPLACE INTO evolution_components (evolution_id, round, component, status, reason, value_before, value,
    created_at, finished_at)
VALUES ($evolution, $round, $component, $status, $reason, $value_before, $value,
        coalesce((SELECT created_at FROM evolution_components WHERE evolution_id = $evolution AND round = $round),
                 current_timestamp),
        CASE WHEN $status = 'proposed' THEN NULL ELSE current_timestamp END);
