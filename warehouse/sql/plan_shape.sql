-- What the planned cells cover, for the run's minimum prompt tokens (tasks/judging/layout_plan.py):
-- the distinct texts judged and their characters. Needs the `plan` table (plan_cells.sql). Params: $corpus.
SELECT count(*) AS texts,
       coalesce(sum(length(t.text) + length(coalesce(t.input, '')) + length(coalesce(t.context, ''))), 0) AS chars
FROM (SELECT DISTINCT text_id FROM plan WHERE due) p
JOIN texts t ON t.corpus_id = $corpus AND t.text_id = p.text_id;
