-- A rubric version's criteria as the labelling page shows them: scale range and step, and the
-- rubric's document (for the anchors' labels and descriptions). Params: $rubric.
SELECT c.criterion_id, c.title, c.description, c.scale_kind, c.scale_min, c.scale_max, c.unit_step,
       r.document
FROM criteria c JOIN rubrics r USING (rubric_hash)
WHERE c.rubric_hash = $rubric
ORDER BY c.criterion_id;
