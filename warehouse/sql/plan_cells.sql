-- The work cells of a run that are not landed for good yet: resume and cache are this one anti-join.
-- A cell is final once it landed ok or failed for a reason retrying cannot fix; transient
-- failures (retries exhausted), unreachable endpoints, setup failures (a bad key or URL, fixed
-- since) and calls the budget did not cover are planned again: FailureKind.replanned() in
-- tasks/judging/failures.py (tests/tasks/judging/test_failures.py pins this list to it); cells waiting in
-- a submitted batch are not. Needs the registered table plan_units(genre_key,
-- unit_id, unit_hash: the rendered unit's fingerprint, part of the key). Params: $corpus, $rubric, $judge, $samples, $genres (the genres the rubric names),
-- $skip_disqualified (leave out texts a pattern disqualifier already fails), $shard_size, $max_cells, $layout
-- (tasks/judging/run_options.RunOptions: the run's options are all given), $only_texts
-- (plan only the texts of the registered table plan_texts(text_id): a sequential A/B's batch).
CREATE OR REPLACE TEMP TABLE plan AS
WITH cells AS (
    SELECT sha256(concat_ws('|', t.text_id, text_version(t.sha256, t.input, t.context, t.genre), u.unit_id,
                            $rubric, $judge, s.sample, u.unit_hash)) AS cell_key,
           t.text_id, text_version(t.sha256, t.input, t.context, t.genre) AS text_sha256, u.unit_id,
           s.sample::INTEGER AS sample, t.genre
    FROM texts t
    JOIN plan_units u ON u.genre_key = CASE WHEN list_contains($genres, t.genre) THEN t.genre ELSE '' END
    CROSS JOIN range($samples) s(sample)
    WHERE t.corpus_id = $corpus AND t.removed_at IS NULL
      AND (NOT $only_texts OR t.text_id IN (SELECT text_id FROM plan_texts))
      AND NOT ($skip_disqualified AND EXISTS (
          SELECT 1 FROM pattern_hits h
          JOIN rubric_disqualifiers d ON d.rubric_hash = h.rubric_hash AND d.kind = 'pattern'
           AND list_contains(d.patterns, h.pattern_id)
          WHERE h.corpus_id = t.corpus_id AND h.text_id = t.text_id AND h.text_sha256 = t.sha256
            AND h.rubric_hash = $rubric AND h.hits > 0))
),
-- The same text (id and version) in two corpora is one cell key: the corpus that landed it first owns
-- it, and another corpus's cell takes a key of its own (the key with `|corpus|<id>` appended), which
-- adopt_corpus_cells.sql fills from the owner's ok cell, so the same question is never bought twice
-- and every corpus's views see its own rows. A corpus that holds such a key keeps it.
keyed AS (
    SELECT c.* REPLACE (CASE WHEN o.corpus_id <> $corpus OR m.cell_key IS NOT NULL
                             THEN sha256(c.cell_key || '|corpus|' || $corpus) ELSE c.cell_key END AS cell_key)
    FROM cells c
    LEFT JOIN completions o ON o.cell_key = c.cell_key
    LEFT JOIN completions m ON m.cell_key = sha256(c.cell_key || '|corpus|' || $corpus)
)
-- Cells sharing a prefix run together ($layout, chosen by tasks/judging/layout_plan.py): rubric-first,
-- a call unit's cells (they share its system prompt); text-first, a text's cells (they share the
-- text), so a server's prefix cache (vLLM's, llama.cpp's "prefix-match hit", OpenAI's cached input
-- tokens at a lower price) still holds the prefix when the next call comes.
-- Keys only: the texts join each shard's file as it is written (steps._write_plan), so the plan of a
-- large corpus never holds its texts in memory (#22).
-- `due`: judged by this run; a cell past $max_cells is not (steps.plan_cells leaves it out of the
-- plan, so the next run's anti-join plans it again).
SELECT *, position // $shard_size AS shard, ($max_cells IS NULL OR position < $max_cells) AS due
FROM (
    SELECT c.*, row_number() OVER (
        ORDER BY CASE WHEN $layout = 'text-first' THEN c.text_id ELSE c.unit_id END, coalesce(c.genre, ''),
                 CASE WHEN $layout = 'text-first' THEN c.unit_id ELSE c.text_id END, c.sample) - 1 AS position
    FROM keyed c
    WHERE NOT EXISTS (
        SELECT 1 FROM completions p
        WHERE p.cell_key = c.cell_key AND (p.status = 'ok' OR p.error_kind NOT IN ('transient', 'unreachable', 'setup', 'budget')))
      AND NOT EXISTS (  -- waiting in a batch an earlier run submitted: that run's batch is collected instead
        SELECT 1 FROM batch_requests r JOIN batches b USING (batch_id)
        WHERE r.cell_key = c.cell_key AND b.status IN ('uploaded', 'submitted'))
);
