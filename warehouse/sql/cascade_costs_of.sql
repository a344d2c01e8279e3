-- One cascade's calls and cost against strong-only (views.sql: cascade_costs). Params: $cascade.
SELECT texts, cheap_calls, strong_calls, cheap_usd, strong_usd, strong_only_calls, strong_only_usd
FROM cascade_costs WHERE cascade_id = $cascade;
