-- One cascade's split by deciding level (views.sql: cascade_split). Params: $cascade.
SELECT level, texts, scored FROM cascade_split WHERE cascade_id = $cascade ORDER BY level;
