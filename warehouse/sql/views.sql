-- Analytics views. A "judgment set" is one (corpus, rubric version, judge setup) that some run
-- scored; every aggregate is per judgment set and shows its coverage (scored / planned).

CREATE OR REPLACE VIEW judgment_sets AS
SELECT DISTINCT corpus_id, rubric_hash, judge_hash FROM runs;

-- What the judge sees of a text, as one digest: the text's sha256 alone when it has no input,
-- context or genre (so plain texts keep the cell keys they always had), else a digest of all four.
CREATE OR REPLACE MACRO text_version(sha, input, context, genre) AS
    CASE WHEN input IS NULL AND context IS NULL AND genre IS NULL THEN sha
         ELSE sha256(concat_ws(chr(31), sha, 'input:' || coalesce(input, chr(0)),
                               'context:' || coalesce(context, chr(0)), 'genre:' || coalesce(genre, chr(0))))
    END;

-- Scores are added as exact whole numbers of billionths (their stated precision, 9 decimals):
-- a double sum adds in whatever order DuckDB's threads give, and a mean ending in a 5 at the tenth
-- decimal then rounded either way, flipping a label at a threshold. rubrics/scoring.py's `ticks`
-- and `tick_ratio` are the same operations, so the reference scorer agrees bit for bit.
CREATE OR REPLACE MACRO ticks(x) AS floor(x * 1e9 + 0.5)::HUGEINT;
-- n / d billionths (d > 0), rounded half up, as a score: floor((2n + d) / 2d), DuckDB's `//` being
-- truncation (a negative mean, as an A/B delta's, is one below it where the remainder is negative).
CREATE OR REPLACE MACRO tick_ratio(n, d) AS CASE WHEN d > 0 THEN
    ((2 * n + d) // (2 * d) - CASE WHEN (2 * n + d) % (2 * d) < 0 THEN 1 ELSE 0 END)::DOUBLE / 1e9 END;
-- Aggregates (use them where one is allowed), exact whatever the order of the rows:
-- the mean of scores;
CREATE OR REPLACE MACRO exact_mean(x) AS tick_ratio(sum(ticks(x)), count(x));
-- their sample standard deviation (NULL under two values);
CREATE OR REPLACE MACRO exact_stddev(x) AS CASE WHEN count(x) > 1 THEN
    sqrt((count(x) * sum(ticks(x) * ticks(x)) - sum(ticks(x)) * sum(ticks(x))) / (count(x) * (count(x) - 1))) / 1e9 END;
-- the weighted mean of the scored values (the weights of unscored ones left out), and the weighted sum.
CREATE OR REPLACE MACRO exact_weighted_mean(w, x) AS
    tick_ratio(sum(ticks(w) * ticks(x)), sum(CASE WHEN x IS NOT NULL THEN ticks(w) END));
CREATE OR REPLACE MACRO exact_weighted_sum(w, x) AS tick_ratio(sum(ticks(w) * ticks(x)), 1000000000::HUGEINT);
-- The share of the possible points earned (sums of billionths), within [0, 1]; NULL when none are possible.
CREATE OR REPLACE MACRO points_share(earned, possible) AS
    CASE WHEN possible > 0 THEN greatest(0, least(1, tick_ratio(earned * 1000000000, possible))) END;

-- Whether a cell was sent its unit as the rubric version renders it now: rubric_units holds each
-- unit's current fingerprint (rubrics/render), so after a wording change the cells sent the old
-- wording are history, left out of every view, as an older text version is. A cell landed before
-- fingerprints (NULL) stays current.
CREATE OR REPLACE MACRO current_rendering(rubric, fingerprint) AS
    fingerprint IS NULL
    OR EXISTS (SELECT 1 FROM rubric_units ru WHERE ru.rubric_hash = rubric AND ru.unit_hash = fingerprint);

-- The texts of each corpus as they are now (removed texts left out), with their version.
CREATE OR REPLACE VIEW current_texts AS
SELECT corpus_id, text_id, text_version(sha256, input, context, genre) AS version, genre
FROM texts WHERE removed_at IS NULL;

-- Judgments and completions of each text's current version only: a changed text, input, context
-- or genre leaves the older judgments in the tables (history) but out of every view.
CREATE OR REPLACE VIEW current_judgments AS
SELECT j.* FROM judgments j
JOIN current_texts t ON t.corpus_id = j.corpus_id AND t.text_id = j.text_id AND t.version = j.text_sha256
WHERE current_rendering(j.rubric_hash, j.unit_hash);

CREATE OR REPLACE VIEW current_completions AS
SELECT c.* FROM completions c
JOIN current_texts t ON t.corpus_id = c.corpus_id AND t.text_id = c.text_id AND t.version = c.text_sha256
WHERE current_rendering(c.rubric_hash, c.unit_hash);

-- The per-text analytics are tables kept current as work lands (analytics_tables.sql,
-- analytics_refresh.sql); these views are their public names.

-- One row per text and judged criterion: the mean unit score over the scored samples (of the
-- text's current version), and the mean logprob-weighted unit score where the endpoint returned logprobs.
CREATE OR REPLACE VIEW criterion_scores AS
SELECT corpus_id, rubric_hash, judge_hash, text_id, criterion_id, weight, importance, pass_threshold, points,
       judgments, scored, unit_score, unit_stddev, unit_min, unit_max, passed, weighted_unit_score
FROM mat_criterion_scores;

-- The tree's inner nodes per text, for rubrics with groups (and human labels of their criteria,
-- as judge 'label:<rater>'): value and whether it is met.
CREATE OR REPLACE VIEW node_scores AS
SELECT corpus_id, rubric_hash, judge_hash, text_id, node_id, value, met FROM mat_node_scores;

-- Disqualifier hits of all four kinds (pattern, criterion, judge, constraint), one row per text,
-- disqualifier and cause (detail: the pattern that matched, the criterion's score, or the call
-- units that declared it or broke a hard output constraint).
CREATE OR REPLACE VIEW disqualifier_hits AS
SELECT corpus_id, rubric_hash, judge_hash, text_id, disqualifier_id, kind, detail FROM mat_disqualifier_hits;

-- engine: soft judgment-scoped output constraints the text's whole answer broke, per sample: stored
-- warnings (a hard one is a disqualifier hit of kind constraint instead).
CREATE OR REPLACE VIEW constraint_warnings AS
SELECT corpus_id, rubric_hash, judge_hash, text_id, sample, constraint_id, problem FROM mat_constraint_warnings;

-- Per text: the rubric's score, label and pass/fail, with coverage (scored / planned criteria).
CREATE OR REPLACE VIEW text_scores AS
SELECT corpus_id, rubric_id, version, rubric_hash, judge_hash, text_id, score, label, passed, disqualifiers,
       scored_criteria, planned_criteria, coverage
FROM mat_text_scores;

-- Pattern hits per text and per pattern (counts for a text's earlier version are deleted when it changes).
CREATE OR REPLACE VIEW pattern_hit_counts AS
SELECT corpus_id, rubric_hash, text_id, pattern_id, hits FROM pattern_hits;

CREATE OR REPLACE VIEW pattern_summary AS
SELECT corpus_id, rubric_hash, pattern_id,
       count(*) FILTER (WHERE hits > 0) AS texts_hit,
       count(*) AS texts_checked,
       sum(hits) AS total_hits,
       count(*) FILTER (WHERE hits > 0) / count(*) AS hit_rate
FROM pattern_hits GROUP BY ALL;

-- One row per run: work done, failures by kind, tokens, latency, coverage (the judgment set's cells
-- scored for the current texts / the cells the run planned, at most 1). The counts are kept per run
-- and per text as work lands (analytics_refresh.sql).
CREATE OR REPLACE VIEW run_summary AS
WITH ok AS (  -- coverage counts the cells of each judgment set scored for the texts as they are now
    SELECT corpus_id, rubric_hash, judge_hash, sum(ok_cells) AS ok_cells FROM mat_ok_cells GROUP BY ALL
)
SELECT r.run_id, r.corpus_id, r.rubric_hash, r.judge_hash, r.model, r.strategy, r.status,
       r.planned_cells, r.skipped_cells,
       coalesce(c.landed_cells, 0) AS landed_cells, coalesce(c.ok_cells, 0) AS ok_cells,
       coalesce(c.failed_cells, 0) AS failed_cells, c.errors,
       coalesce(c.scored_judgments, 0) AS scored_judgments, coalesce(c.unscored_judgments, 0) AS unscored_judgments,
       coalesce(c.calls, 0) AS calls, coalesce(c.retries, 0) AS retries,
       coalesce(c.prompt_tokens, 0) AS prompt_tokens, coalesce(c.completion_tokens, 0) AS completion_tokens,
       c.latency_p50_ms, c.latency_p95_ms, c.queue_p50_ms,
       r.started_at, r.finished_at,
       epoch(r.finished_at - r.started_at) AS wall_s,
       least(1.0, coalesce(ok.ok_cells, 0) / nullif(r.planned_cells, 0)) AS coverage,
       coalesce(c.adopted_cells, 0) AS adopted_cells,  -- of skipped_cells: copied from another version
       coalesce(c.cached_tokens, 0) AS cached_tokens,  -- of prompt_tokens: served from a prefix cache
       r.layout, r.layout_reason, r.minimum_prompt_tokens  -- the cache layout, and each distinct prefix once
FROM runs r LEFT JOIN mat_run_stats c USING (run_id)
LEFT JOIN ok ON ok.corpus_id = r.corpus_id AND ok.rubric_hash = r.rubric_hash AND ok.judge_hash = r.judge_hash;

-- One call's cost: fresh input, cached input (at its own rate, else the input rate) and output;
-- the Batch API bills half. Counts as an endpoint reported them are made sane first (negative ones
-- are 0, cached tokens at most the prompt), as tasks/judging/costs.Price.cost does: never below $0.
CREATE OR REPLACE MACRO call_usd(prompt_tokens, cached_tokens, completion_tokens, output_mode,
                                 input_rate, cached_rate, output_rate) AS
    ((greatest(prompt_tokens, 0) - least(greatest(coalesce(cached_tokens, 0), 0), greatest(prompt_tokens, 0))) * input_rate
     + least(greatest(coalesce(cached_tokens, 0), 0), greatest(prompt_tokens, 0)) * coalesce(cached_rate, input_rate)
     + greatest(completion_tokens, 0) * output_rate) / 1e6
    * CASE WHEN output_mode LIKE 'batch:%' THEN 0.5 ELSE 1 END;

-- Cost per run at the prices in model_prices (NULL for a model without a price): the run's billed
-- token counts (kept per run as work lands, analytics_refresh.sql) times the model's rates, which
-- is call_usd summed over the run's calls. Runs with no completion yet are left out.
CREATE OR REPLACE VIEW run_costs AS
SELECT r.run_id, r.corpus_id, r.rubric_hash, r.judge_hash, r.model,
       coalesce(s.prompt_tokens, 0) AS prompt_tokens, coalesce(s.completion_tokens, 0) AS completion_tokens,
       (s.billed_input_tokens * p.input_per_mtok
        + s.billed_cached_tokens * coalesce(p.cached_input_per_mtok, p.input_per_mtok)
        + s.billed_completion_tokens * p.output_per_mtok) / 1e6 AS usd,
       r.estimated_usd, r.budget_usd,
       -- what the prefix cache saved: the cached tokens at the input rate less their own
       s.billed_cached_tokens * (p.input_per_mtok - coalesce(p.cached_input_per_mtok, p.input_per_mtok)) / 1e6
           AS cache_saved_usd
FROM runs r JOIN mat_run_stats s USING (run_id) LEFT JOIN model_prices p ON p.model = r.model
WHERE s.landed_cells + s.adopted_cells > 0;

-- Cost per rubric version and criterion: a call's cost is shared evenly by the criteria it judged.
CREATE OR REPLACE VIEW criterion_costs AS
WITH cell AS (
    SELECT c.cell_key, c.rubric_hash,
           call_usd(c.prompt_tokens, c.cached_tokens, c.completion_tokens, c.output_mode,
                    p.input_per_mtok, p.cached_input_per_mtok, p.output_per_mtok) AS usd
    FROM completions c JOIN runs r USING (run_id) LEFT JOIN model_prices p ON p.model = r.model
),
share AS (SELECT cell_key, count(*) AS criteria FROM judgments GROUP BY cell_key)
SELECT j.rubric_hash, rb.rubric_id, rb.version, j.criterion_id, count(*) AS judgments,
       sum(cell.usd / share.criteria) AS usd
FROM judgments j JOIN cell USING (cell_key) JOIN share USING (cell_key) JOIN rubrics rb ON rb.rubric_hash = j.rubric_hash
GROUP BY ALL;

-- A judge panel: every judge setup that scored one rubric version on a corpus, pooled per text and
-- criterion (unit scores): how many judges, their mean and median, the spread (max - min and
-- standard deviation), and the majority: the most common score and the share of judges giving it
-- (for binary and nominal scales the panel's vote). A tie goes to the lowest of the tied scores, so
-- the same file always gives the same majority. Texts one judge alone scored are left out.
CREATE OR REPLACE VIEW panel_scores AS
WITH votes AS (
    SELECT corpus_id, rubric_hash, text_id, criterion_id, unit_score, count(*) AS n
    FROM criterion_scores WHERE unit_score IS NOT NULL
    GROUP BY ALL
), majority AS (
    SELECT corpus_id, rubric_hash, text_id, criterion_id,
           first(unit_score ORDER BY n DESC, unit_score ASC) AS majority, max(n) AS majority_n
    FROM votes
    GROUP BY ALL
)
SELECT s.corpus_id, s.rubric_hash, s.text_id, s.criterion_id,
       count(*) AS judges, exact_mean(s.unit_score) AS mean, median(s.unit_score) AS median,
       max(s.unit_score) - min(s.unit_score) AS spread, exact_stddev(s.unit_score) AS stddev,
       any_value(m.majority) AS majority,
       any_value(m.majority_n) / count(*) AS majority_share
FROM criterion_scores s
JOIN majority m USING (corpus_id, rubric_hash, text_id, criterion_id)
WHERE s.unit_score IS NOT NULL
GROUP BY s.corpus_id, s.rubric_hash, s.text_id, s.criterion_id
HAVING count(*) > 1;

-- Pairwise judging (tasks/loaders/pairs.py): each pair was judged in both orders as two texts. One row per
-- pair, criterion and judge: the verdict of each order in the pair's own terms (a = response_a),
-- whether the two orders agree, whether the judge followed the position (the same slot both
-- times), and the final verdict by the documented rule: consistent verdicts stand, an
-- inconsistent pair is a tie (and `consistent` is false). `label` is the human preference, if any.
CREATE OR REPLACE VIEW pair_verdicts AS
SELECT corpus_id, rubric_hash, judge_hash, pair_id, criterion_id, label, system_a, system_b, verdict_ab, verdict_ba,
       consistent, follows_position, verdict, rationale_ab, rationale_ba
FROM mat_pair_verdicts;

-- Per judge and criterion: pairs judged in both orders, consistency after the swap, the
-- position-bias rate (share of pairs whose verdict follows the position), the final verdicts, and
-- agreement with the human labels (accuracy over labelled pairs, and over pairs where neither the
-- label nor the verdict is a tie).
CREATE OR REPLACE VIEW pairwise_summary AS
SELECT corpus_id, rubric_hash, judge_hash, criterion_id, count(*) AS pairs,
       avg(consistent::INT) AS consistency, avg(follows_position::INT) AS position_bias,
       avg((verdict = 'a')::INT) AS a_share, avg((verdict = 'b')::INT) AS b_share, avg((verdict = 'tie')::INT) AS tie_share,
       count(label) AS labelled,
       avg((verdict = label)::INT) FILTER (WHERE label IS NOT NULL) AS accuracy,
       avg((verdict = label)::INT) FILTER (WHERE label IN ('a', 'b') AND verdict IN ('a', 'b')) AS accuracy_no_ties
FROM pair_verdicts
GROUP BY corpus_id, rubric_hash, judge_hash, criterion_id;

-- Win rates when pairs name their systems (system_a / system_b): each final verdict counted for
-- both systems, a tie as half a win.
CREATE OR REPLACE VIEW pair_win_rates AS
WITH sides AS (
    SELECT corpus_id, rubric_hash, judge_hash, criterion_id, system_a AS system,
           CASE verdict WHEN 'a' THEN 1.0 WHEN 'tie' THEN 0.5 ELSE 0.0 END AS win
    FROM pair_verdicts WHERE system_a IS NOT NULL AND system_b IS NOT NULL
    UNION ALL
    SELECT corpus_id, rubric_hash, judge_hash, criterion_id, system_b,
           CASE verdict WHEN 'b' THEN 1.0 WHEN 'tie' THEN 0.5 ELSE 0.0 END
    FROM pair_verdicts WHERE system_a IS NOT NULL AND system_b IS NOT NULL
)
SELECT corpus_id, rubric_hash, judge_hash, criterion_id, system, count(*) AS comparisons, avg(win) AS win_rate
FROM sides GROUP BY ALL;

-- The human target per text: the mean of some raters' labels on one criterion (what `improve fit`
-- and `improve evolve` agree with).
CREATE OR REPLACE MACRO label_target(corpus, raters, label) AS TABLE
SELECT text_id, avg(score) AS human, count(*) AS raters
FROM labels
WHERE corpus_id = corpus AND list_contains(raters, rater) AND criterion_id = label
GROUP BY text_id;

-- cascade: the deciding answer of each text of a judge cascade, per criterion (cascade_decisions) and
-- per text (cascade_text_decisions): the cheap judge's where it kept the text, the strong judge's where
-- the text was escalated or in the calibration sample, and for a text the strong judge itself was
-- unsure of (level 'human', `--human-below`) the mean of its human labels by any rater, on the unit
-- scale (`human`; the text's score their weighted mean), or none while a criterion has no label
-- yet (`pending-human`: the text waits in the labelling queue, label_queue.sql).
CREATE OR REPLACE VIEW cascade_decisions AS
WITH human AS (
    SELECT l.corpus_id, l.text_id, c.rubric_hash, l.criterion_id,
           avg(coalesce((l.score - c.scale_min) / nullif(c.scale_max - c.scale_min, 0), l.score)) AS unit_score
    FROM labels l JOIN criteria c ON c.criterion_id = l.criterion_id
    GROUP BY ALL
)
SELECT k.cascade_id, k.corpus_id, k.rubric_hash, t.text_id, c.criterion_id, c.weight, t.level,
       CASE WHEN t.level = 'human' AND h.unit_score IS NULL THEN 'pending-human' ELSE t.level END AS decided_by,
       CASE WHEN t.level = 'human' THEN h.unit_score ELSE s.unit_score END AS unit_score
FROM cascades k JOIN cascade_texts t USING (cascade_id)
JOIN criteria c ON c.rubric_hash = k.rubric_hash
LEFT JOIN criterion_scores s ON s.corpus_id = k.corpus_id AND s.text_id = t.text_id AND s.rubric_hash = k.rubric_hash
 AND s.criterion_id = c.criterion_id
 AND s.judge_hash = CASE WHEN t.level = 'cheap' THEN k.cheap_judge ELSE k.strong_judge END
LEFT JOIN human h ON h.corpus_id = k.corpus_id AND h.text_id = t.text_id AND h.rubric_hash = k.rubric_hash
 AND h.criterion_id = c.criterion_id;

CREATE OR REPLACE VIEW cascade_text_decisions AS
WITH human AS (
    SELECT cascade_id, text_id, bool_and(unit_score IS NOT NULL) AS labelled,
           exact_weighted_mean(weight, unit_score) AS score
    FROM cascade_decisions WHERE level = 'human' GROUP BY ALL
)
SELECT k.cascade_id, k.corpus_id, t.text_id, t.confidence, t.strong_confidence,
       CASE WHEN t.level <> 'human' THEN t.level WHEN h.labelled THEN 'human' ELSE 'pending-human' END AS decided_by,
       CASE WHEN t.level <> 'human' THEN s.score WHEN h.labelled THEN h.score END AS score
FROM cascades k JOIN cascade_texts t USING (cascade_id)
LEFT JOIN human h ON h.cascade_id = t.cascade_id AND h.text_id = t.text_id
LEFT JOIN text_scores s ON s.corpus_id = k.corpus_id AND s.text_id = t.text_id AND s.rubric_hash = k.rubric_hash
 AND s.judge_hash = CASE WHEN t.level = 'cheap' THEN k.cheap_judge ELSE k.strong_judge END;

-- seq: a judge cascade's split (which level decided how many texts; `scored` counts texts whose
-- deciding judge or human has a score: a failed strong cell is never filled by the cheap judge) and its cost
-- against strong-only (every text at the strong judge's mean calls and USD per text it judged).
CREATE OR REPLACE VIEW cascade_split AS
SELECT cascade_id, corpus_id, decided_by AS level, count(*) AS texts, count(score) AS scored
FROM cascade_text_decisions GROUP BY ALL;

CREATE OR REPLACE VIEW cascade_costs AS
WITH calls AS (
    SELECT k.cascade_id, c.judge_hash = k.strong_judge AS strong, c.text_id,
           call_usd(c.prompt_tokens, c.cached_tokens, c.completion_tokens, c.output_mode,
                    p.input_per_mtok, p.cached_input_per_mtok, p.output_per_mtok) AS usd
    FROM cascades k JOIN cascade_texts t USING (cascade_id)
    JOIN completions c ON c.corpus_id = k.corpus_id AND c.text_id = t.text_id AND c.rubric_hash = k.rubric_hash
     AND c.judge_hash IN (k.cheap_judge, k.strong_judge) AND c.status = 'ok'
    JOIN runs r ON r.run_id = c.run_id LEFT JOIN model_prices p ON p.model = r.model
),
texts AS (SELECT cascade_id, count(*) AS texts FROM cascade_texts GROUP BY cascade_id)
SELECT cascade_id, any_value(texts.texts) AS texts,
       count(*) FILTER (WHERE NOT strong) AS cheap_calls,
       count(*) FILTER (WHERE strong) AS strong_calls,
       sum(usd) FILTER (WHERE NOT strong) AS cheap_usd,
       sum(usd) FILTER (WHERE strong) AS strong_usd,
       count(*) FILTER (WHERE strong) / nullif(count(DISTINCT text_id) FILTER (WHERE strong), 0)
           * any_value(texts.texts) AS strong_only_calls,
       sum(usd) FILTER (WHERE strong) / nullif(count(DISTINCT text_id) FILTER (WHERE strong), 0)
           * any_value(texts.texts) AS strong_only_usd
FROM calls JOIN texts USING (cascade_id)
GROUP BY cascade_id;

-- formats (#36): a rubric's verdict space, read from its stored document (a ComplianceJudge's
-- Yes / Somewhat / No with their scores, or the rubric's own); no rows for a rubric that states none.
CREATE OR REPLACE VIEW rubric_verdicts AS
SELECT rubric_hash, unnest(range(1, len(vs) + 1)) AS position, unnest(vs, recursive := true)
FROM (SELECT rubric_hash,
             from_json(document->'verdicts', '[{"label": "VARCHAR", "score": "DOUBLE", "description": "VARCHAR"}]') AS vs
      FROM rubrics WHERE json_array_length(document->'verdicts') > 0);

-- Each text's current route (`score --route`): the field, the text's value, the choice that took it
-- and the rubric that judged it.
CREATE OR REPLACE VIEW routed_texts AS
SELECT t.corpus_id, t.text_id, t.selector, t.value, t.choice, t.rubric_hash, r.rubric_id, r.version, t.routed_at
FROM text_routes t JOIN rubrics r USING (rubric_hash)
QUALIFY row_number() OVER (PARTITION BY t.corpus_id, t.text_id ORDER BY t.routed_at DESC) = 1;

-- Per text and rubric of a routed score: 'routed' where the text's current route chose this rubric,
-- 'not routed' where it chose another and this rubric never judged the text (its empty row is not a
-- missing score); `routed_to` names the rubric the route chose.
CREATE OR REPLACE VIEW text_route_status AS
SELECT s.corpus_id, s.rubric_hash, s.judge_hash, s.text_id, rt.rubric_id AS routed_to,
       CASE WHEN rt.rubric_hash = s.rubric_hash THEN 'routed' ELSE 'not routed' END AS route_status
FROM mat_text_scores s JOIN routed_texts rt USING (corpus_id, text_id)
WHERE rt.rubric_hash = s.rubric_hash OR NOT EXISTS (
    SELECT 1 FROM completions c WHERE c.corpus_id = s.corpus_id AND c.text_id = s.text_id AND c.rubric_hash = s.rubric_hash
);

-- Per text, beside its score: the rubric's profile, the compliance verdict (the text's label where it
-- is one of the rubric's verdicts, as a judge asked for the verdict gives it; else the verdict whose
-- score is nearest the text's score, ties to the lower), the detection result
-- (the patterns that fired, the disqualifiers that fired, the criteria the text fails) and, for a
-- routed score, the field and value that chose this rubric, or `route_status` 'not routed' and the
-- rubric the text went to (`routed_to`).
CREATE OR REPLACE VIEW text_outcomes AS
WITH fired AS (
    SELECT corpus_id, rubric_hash, text_id, list(pattern_id ORDER BY pattern_id) AS patterns_fired
    FROM pattern_hits WHERE hits > 0 GROUP BY ALL
),
failing AS (
    SELECT corpus_id, rubric_hash, judge_hash, text_id, list(criterion_id ORDER BY criterion_id) AS criteria_failed
    FROM mat_criterion_scores WHERE NOT passed GROUP BY ALL
),
verdicts AS (
    SELECT s.corpus_id, s.rubric_hash, s.judge_hash, s.text_id,
           coalesce(any_value(v.label) FILTER (WHERE v.label = s.label),
                    arg_min(v.label, [abs(v.score - s.score), v.score])) AS verdict
    FROM mat_text_scores s JOIN rubric_verdicts v USING (rubric_hash)
    WHERE v.score IS NOT NULL AND s.score IS NOT NULL GROUP BY ALL
)
SELECT s.corpus_id, s.rubric_id, s.version, s.rubric_hash, s.judge_hash, s.text_id, r.profile,
       s.score, s.label, s.passed, v.verdict,
       coalesce(f.patterns_fired, []::VARCHAR[]) AS patterns_fired,
       coalesce(s.disqualifiers, []::VARCHAR[]) AS disqualifiers_fired,
       coalesce(c.criteria_failed, []::VARCHAR[]) AS criteria_failed,
       len(coalesce(f.patterns_fired, [])) + len(coalesce(s.disqualifiers, [])) > 0 AS detected,
       rt.selector AS routed_by, rt.value AS route_value, rs.route_status, rs.routed_to
FROM mat_text_scores s
JOIN rubrics r USING (rubric_hash)
LEFT JOIN verdicts v USING (corpus_id, rubric_hash, judge_hash, text_id)
LEFT JOIN fired f USING (corpus_id, rubric_hash, text_id)
LEFT JOIN failing c USING (corpus_id, rubric_hash, judge_hash, text_id)
LEFT JOIN routed_texts rt ON rt.corpus_id = s.corpus_id AND rt.text_id = s.text_id AND rt.rubric_hash = s.rubric_hash
LEFT JOIN text_route_status rs USING (corpus_id, rubric_hash, judge_hash, text_id);

-- Per-text advice (coaching): each advice rule of the rubric whose patterns fired on the text, with
-- the patterns that fired it (`because`); read from the rubric's stored document and the text's
-- pattern hits, so every scored text keeps the advice its rubric gives it.
CREATE OR REPLACE VIEW text_advice AS
WITH rules AS (
    SELECT rubric_hash, unnest(range(1, len(a) + 1)) AS rule, unnest(a, recursive := true)
    FROM (SELECT rubric_hash, from_json(document->'advice', '[{"when": ["VARCHAR"], "advice": "VARCHAR"}]') AS a
          FROM rubrics WHERE json_array_length(document->'advice') > 0)
)
SELECT h.corpus_id, h.rubric_hash, h.text_id, r.rule, r.advice, list(h.pattern_id ORDER BY h.pattern_id) AS because
FROM rules r
JOIN pattern_hits h ON h.rubric_hash = r.rubric_hash AND list_contains(r."when", h.pattern_id) AND h.hits > 0
GROUP BY ALL;

-- formats (#36): best-of-n (`rubricflow best-of`), one row per candidate of each judged set: its
-- score (criterion response-<i> of the rubric's best-of form, rubrics/best_of.py), its system, the
-- human's pick (`label`), and the winner the judge named in the same call (the most frequent over
-- the samples).
CREATE OR REPLACE VIEW best_of_candidates AS
WITH winners AS (
    SELECT corpus_id, rubric_hash, judge_hash, text_id, mode(TRY_CAST(value->>'$' AS INTEGER)) AS winner
    FROM current_judgments WHERE criterion_id = 'winner' AND status = 'scored' GROUP BY ALL
)
SELECT s.corpus_id, s.rubric_hash, s.judge_hash, s.text_id AS set_id,
       CAST(substr(s.criterion_id, 10) AS INTEGER) AS candidate,
       t.metadata->'systems'->>(candidate - 1) AS system, s.unit_score AS score,
       w.winner, candidate = w.winner AS is_winner, TRY_CAST(t.metadata->>'label' AS INTEGER) AS label
FROM mat_criterion_scores s
JOIN rubrics r USING (rubric_hash)
JOIN texts t ON t.corpus_id = s.corpus_id AND t.text_id = s.text_id
LEFT JOIN winners w ON w.corpus_id = s.corpus_id AND w.rubric_hash = s.rubric_hash
 AND w.judge_hash = s.judge_hash AND w.text_id = s.text_id
WHERE r.document->'metadata'->'provenance'->>'best_of' IS NOT NULL
  AND regexp_full_match(s.criterion_id, 'response-[0-9]+');

-- transcripts (#51): one row per message of every transcript (tasks/loaders/transcripts.py), keyed
-- by (corpus_id, transcript_id, position); message_id is the id the rendering and evidence cite
-- ([M12]); content is the body, stored once by its hash in message_bodies.
CREATE OR REPLACE VIEW messages AS
SELECT m.corpus_id, m.transcript_id, m.position, 'M' || m.position AS message_id, m.role, b.body AS content,
       m.name, m.tool_calls, m.tool_call_id, m.is_error, m.step_id, m.span_id, m.ts AS timestamp, m.body_hash
FROM transcript_messages m LEFT JOIN message_bodies b ON b.body_hash = m.body_hash;

-- One row per tool call, with the tool result that answers it (NULL: none did). A result answers the
-- latest call before it with its id, as the rendering names it (a server that numbers each turn's
-- calls from call_0 uses an id again: the result answers the call just made); a call answered twice
-- shows its first result.
CREATE OR REPLACE VIEW tool_calls AS
WITH calls AS (
    SELECT corpus_id, transcript_id, position, generate_subscripts(tool_calls, 1) AS call_index,
           unnest(tool_calls) AS call
    FROM transcript_messages WHERE tool_calls IS NOT NULL
),
call_ids AS (SELECT DISTINCT corpus_id, transcript_id, position, call.id AS id FROM calls WHERE call.id IS NOT NULL),
results AS (  -- the messages that answer a call: a fifth of an agent's, the others never sorted by the join
    SELECT corpus_id, transcript_id, tool_call_id, position, is_error, body_hash
    FROM transcript_messages WHERE tool_call_id IS NOT NULL
),
answers AS (  -- each call's first result, carried here (a join back to its message cost as much again)
    SELECT r.corpus_id, r.transcript_id, r.tool_call_id, c.position AS call_position,
           min(r.position) AS position, arg_min_null(r.is_error, r.position) AS is_error,  -- its flag, even NULL
           arg_min_null(r.body_hash, r.position) AS body_hash
    FROM results r ASOF JOIN call_ids c
      ON c.corpus_id = r.corpus_id AND c.transcript_id = r.transcript_id AND c.id = r.tool_call_id
     AND r.position > c.position
    GROUP BY ALL
)
SELECT c.corpus_id, c.transcript_id, c.position, c.call_index, c.call.id AS call_id, c.call.name AS tool_name,
       c.call.arguments AS arguments, a.position AS result_position, rb.body AS result, a.is_error AS result_is_error
FROM calls c
LEFT JOIN answers a ON a.corpus_id = c.corpus_id AND a.transcript_id = c.transcript_id
 AND a.tool_call_id = c.call.id AND a.call_position = c.position
LEFT JOIN message_bodies rb ON rb.body_hash = a.body_hash;
