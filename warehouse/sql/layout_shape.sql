-- What the layout planner (tasks/judging/layout_plan.py) reads of a corpus before planning: its
-- texts and their characters (text, input and context). Params: $corpus, $only_texts, $texts.
SELECT count(*) AS texts,
       coalesce(sum(length(text) + length(coalesce(input, '')) + length(coalesce(context, ''))), 0) AS chars
FROM texts
WHERE corpus_id = $corpus AND removed_at IS NULL AND (NOT $only_texts OR list_contains($texts::VARCHAR[], text_id));
