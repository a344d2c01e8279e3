-- A rubric registered after labels of its criteria were: in a tree rubric those labels get node
-- scores of their own (judge 'label:<rater>', analytics_refresh.sql), so their texts are marked
-- for the refresh (warehouse/analytics.py). Params: $rubric.
INSERT INTO stale_texts
SELECT DISTINCT l.corpus_id, l.text_id
FROM labels l
JOIN criteria c ON c.criterion_id = l.criterion_id AND c.rubric_hash = $rubric
JOIN rubrics r ON r.rubric_hash = c.rubric_hash AND NOT r.is_flat;
