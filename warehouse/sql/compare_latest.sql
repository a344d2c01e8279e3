-- Only when a side spans several judgment sets (--allow-mixed): keep each text's latest scored
-- set, and each criterion's latest, so every text appears once per side.
DELETE FROM cmp_side_texts WHERE rowid NOT IN (
    SELECT rowid FROM cmp_side_texts
    QUALIFY row_number() OVER (PARTITION BY side, text_id ORDER BY score IS NOT NULL DESC, latest DESC) = 1);

DELETE FROM cmp_side_criteria WHERE rowid NOT IN (
    SELECT rowid FROM cmp_side_criteria
    QUALIFY row_number() OVER (PARTITION BY side, text_id, criterion_id ORDER BY latest DESC) = 1);
