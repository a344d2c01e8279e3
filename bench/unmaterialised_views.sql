-- The analytics as rubricflow computed them before they were materialised (session 7's
-- warehouse/sql/views.sql): every question recomputed text scores from all judgments. Kept here
-- as the baseline the benches time the materialised tables against, and as the from-scratch
-- oracle tests/warehouse/test_analytics.py holds the materialised tables equal to. Each view is
-- prefixed `unmat_`; they read the raw tables only, and round scores to 9 decimals as the materialised ones do.

-- One row per text and judged criterion: the mean unit score over the scored samples, and the
-- mean logprob-weighted unit score where the endpoint returned logprobs.
-- (Joining the small criteria table before aggregating is faster than after, at 10M rows.)
CREATE OR REPLACE VIEW unmat_criterion_scores AS
SELECT j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, j.criterion_id,
       c.weight, c.importance, c.pass_threshold, c.points,
       count(*) AS judgments, count(j.unit_score) AS scored,
       exact_mean(j.unit_score) AS unit_score, exact_stddev(j.unit_score) AS unit_stddev,
       min(j.unit_score) AS unit_min, max(j.unit_score) AS unit_max,
       exact_mean(j.unit_score) >= c.pass_threshold AS passed,
       exact_mean(j.weighted_unit_score) AS weighted_unit_score  -- logprob-weighted (G-Eval); NULL without logprobs
FROM current_judgments j
JOIN criteria c ON c.rubric_hash = j.rubric_hash AND c.criterion_id = j.criterion_id
GROUP BY j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, j.criterion_id,
         c.weight, c.importance, c.pass_threshold, c.points;

-- Tree aggregation for rubrics with groups, bottom up: leaves are the scored criteria; each round
-- recomputes the parents of the nodes that changed in the round before, from all of their scored
-- children. (A rubric without groups is scored in one pass by text_scores.)
CREATE OR REPLACE VIEW unmat_node_scores AS
WITH RECURSIVE vals(corpus_id, rubric_hash, judge_hash, text_id, node_id, v, met)
USING KEY (corpus_id, rubric_hash, judge_hash, text_id, node_id) AS (
    -- the leaves: criterion_scores, restricted to rubrics with groups before aggregating (so a
    -- warehouse of flat rubrics costs nothing here); and human labels of those criteria, as judge
    -- 'label:<rater>' (a hand-graded tree aggregates like a judged one: see graded_nodes.sql)
    SELECT * FROM (
        SELECT j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, j.criterion_id,
               exact_mean(j.unit_score), exact_mean(j.unit_score) >= c.pass_threshold
        FROM current_judgments j
        JOIN rubrics r ON r.rubric_hash = j.rubric_hash AND NOT r.is_flat
        JOIN criteria c ON c.rubric_hash = j.rubric_hash AND c.criterion_id = j.criterion_id
        GROUP BY j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, j.criterion_id, c.pass_threshold
        HAVING avg(j.unit_score) IS NOT NULL
        UNION ALL
        SELECT l.corpus_id, c.rubric_hash, 'label:' || l.rater, l.text_id, l.criterion_id,
               exact_mean(coalesce((l.score - c.scale_min) / nullif(c.scale_max - c.scale_min, 0), l.score)) AS v,
               v >= c.pass_threshold
        FROM labels l
        JOIN criteria c ON c.criterion_id = l.criterion_id
        JOIN rubrics r ON r.rubric_hash = c.rubric_hash AND NOT r.is_flat
        GROUP BY l.corpus_id, c.rubric_hash, l.rater, l.text_id, l.criterion_id, c.pass_threshold
    )
    UNION
    SELECT c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, g.node_id,
           round(CASE g.aggregation
               WHEN 'weighted_mean' THEN exact_weighted_mean(k.weight, c.v)
               WHEN 'weighted_sum'  THEN exact_weighted_sum(k.weight, c.v)
               WHEN 'min'           THEN min(c.v)
               WHEN 'max'           THEN max(c.v)
               WHEN 'all'           THEN bool_and(c.met)::DOUBLE
               WHEN 'any'           THEN bool_or(c.met)::DOUBLE
               WHEN 'points'        THEN points_share(
                    sum(CASE WHEN c.met THEN ticks(coalesce(cr.points, 0)) ELSE 0 END),
                    sum(ticks(greatest(coalesce(cr.points, 0), 0))))
           END, 9) AS v,
           NULL::BOOLEAN AS met
    FROM (SELECT DISTINCT w.corpus_id, w.rubric_hash, w.judge_hash, w.text_id, n.parent_id
          FROM vals w JOIN rubric_nodes n ON n.rubric_hash = w.rubric_hash AND n.node_id = w.node_id
          WHERE n.parent_id IS NOT NULL) p
    JOIN rubric_nodes g ON g.rubric_hash = p.rubric_hash AND g.node_id = p.parent_id
    JOIN rubric_nodes k ON k.rubric_hash = p.rubric_hash AND k.parent_id = p.parent_id
    JOIN recurring.vals c ON c.corpus_id = p.corpus_id AND c.rubric_hash = p.rubric_hash
     AND c.judge_hash = p.judge_hash AND c.text_id = p.text_id AND c.node_id = k.node_id
    LEFT JOIN criteria cr ON cr.rubric_hash = k.rubric_hash AND cr.criterion_id = k.node_id
    GROUP BY c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, g.node_id, g.aggregation
)
SELECT corpus_id, rubric_hash, judge_hash, text_id, node_id,
       v AS value, coalesce(met, v >= 0.5) AS met
FROM vals;

-- Disqualifier hits of all three kinds, one row per text, disqualifier and cause (detail: the
-- pattern that matched, the criterion's score, or the call units that declared it). Pattern
-- disqualifiers look at the text under test only.
CREATE OR REPLACE VIEW unmat_disqualifier_hits AS
WITH pattern_dq AS (
    SELECT rubric_hash, disqualifier_id, unnest(patterns) AS pattern_id
    FROM rubric_disqualifiers WHERE kind = 'pattern'
),
criterion_dq AS (
    SELECT rubric_hash, disqualifier_id, criterion_id, threshold
    FROM rubric_disqualifiers WHERE kind = 'criterion'
)
SELECT s.corpus_id, s.rubric_hash, s.judge_hash, h.text_id, d.disqualifier_id, 'pattern' AS kind,
       h.pattern_id AS detail
FROM pattern_hits h
JOIN texts t ON t.corpus_id = h.corpus_id AND t.text_id = h.text_id AND t.sha256 = h.text_sha256 AND t.removed_at IS NULL
JOIN pattern_dq d ON d.rubric_hash = h.rubric_hash AND d.pattern_id = h.pattern_id
JOIN judgment_sets s ON s.corpus_id = h.corpus_id AND s.rubric_hash = h.rubric_hash
WHERE h.hits > 0
UNION ALL
SELECT j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, d.disqualifier_id, 'criterion',
       d.criterion_id || '=' || round(avg(j.unit_score), 4)
FROM current_judgments j
JOIN criterion_dq d ON d.rubric_hash = j.rubric_hash AND d.criterion_id = j.criterion_id
GROUP BY j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, d.disqualifier_id, d.criterion_id, d.threshold
HAVING exact_mean(j.unit_score) <= d.threshold
UNION ALL
SELECT c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, d.disqualifier_id, 'judge',
       string_agg(DISTINCT c.unit_id, ',' ORDER BY c.unit_id)
FROM (SELECT corpus_id, rubric_hash, judge_hash, text_id, unit_id, unnest(declared_disqualifiers) AS disqualifier_id
      FROM current_completions WHERE len(declared_disqualifiers) > 0) c
JOIN rubric_disqualifiers d ON d.rubric_hash = c.rubric_hash AND d.kind = 'judge' AND d.disqualifier_id = c.disqualifier_id
GROUP BY ALL;

-- Per text: the rubric's score, label and pass/fail, with coverage (scored / planned criteria).
CREATE OR REPLACE VIEW unmat_text_scores AS
WITH per_text AS (  -- one pass over the criterion scores: coverage, essentials, and the root of a flat rubric
    SELECT corpus_id, rubric_hash, judge_hash, text_id,
           count(unit_score) AS scored_criteria,
           count(unit_score) FILTER (WHERE importance = 'essential') AS essentials_scored,
           min(unit_score) FILTER (WHERE importance = 'essential') AS essential_min_score,
           exact_weighted_mean(weight, unit_score) AS weighted_mean,
           exact_weighted_sum(weight, unit_score) AS weighted_sum,
           min(unit_score) AS min_score, max(unit_score) AS max_score,
           bool_and(passed)::DOUBLE AS all_met, bool_or(passed)::DOUBLE AS any_met,
           sum(CASE WHEN passed THEN ticks(coalesce(points, 0)) ELSE 0 END) AS points_earned,
           sum(ticks(greatest(coalesce(points, 0), 0))) FILTER (WHERE unit_score IS NOT NULL) AS points_possible
    FROM unmat_criterion_scores GROUP BY ALL
),
planned AS (  -- active criteria per genre (genre-less criteria apply to every text)
    SELECT g.corpus_id, g.rubric_hash, g.judge_hash, g.genre_key, count(*) AS planned_criteria,
           count(*) FILTER (WHERE c.importance = 'essential') AS essentials
    FROM (SELECT DISTINCT s.corpus_id, s.rubric_hash, s.judge_hash, coalesce(t.genre, '') AS genre_key
          FROM judgment_sets s JOIN texts t ON t.corpus_id = s.corpus_id AND t.removed_at IS NULL) g
    JOIN criteria c ON c.rubric_hash = g.rubric_hash AND (len(c.genre) = 0 OR list_contains(c.genre, g.genre_key))
    GROUP BY ALL
),
deep_root AS (
    SELECT n.corpus_id, n.rubric_hash, n.judge_hash, n.text_id, n.value
    FROM unmat_node_scores n JOIN rubric_nodes r ON r.rubric_hash = n.rubric_hash AND r.node_id = n.node_id
    WHERE r.parent_id IS NULL AND NOT r.is_leaf
),
dq AS (
    SELECT corpus_id, rubric_hash, judge_hash, text_id,
           list(DISTINCT disqualifier_id ORDER BY disqualifier_id) AS disqualifiers
    FROM unmat_disqualifier_hits GROUP BY ALL
),
scored AS (
    SELECT s.corpus_id, s.rubric_hash, s.judge_hash, t.text_id, rb.rubric_id, rb.version, rb.disqualified_label,
           rb.pass_threshold AS rubric_pass, rb.essential_minimum, d.disqualifiers,
           p.planned_criteria, coalesce(x.scored_criteria, 0) AS scored_criteria,
           coalesce(x.essentials_scored, 0) = p.essentials AS essentials_scored, x.essential_min_score,
           CASE WHEN rb.is_flat THEN CASE rb.method
                    WHEN 'weighted_mean' THEN x.weighted_mean WHEN 'weighted_sum' THEN x.weighted_sum
                    WHEN 'min' THEN x.min_score WHEN 'max' THEN x.max_score
                    WHEN 'all' THEN x.all_met WHEN 'any' THEN x.any_met
                    WHEN 'points' THEN points_share(x.points_earned, x.points_possible) END
                ELSE r.value END AS root_value,
           rb.invert
    FROM judgment_sets s
    JOIN texts t ON t.corpus_id = s.corpus_id AND t.removed_at IS NULL
    JOIN rubrics rb ON rb.rubric_hash = s.rubric_hash
    JOIN planned p ON p.corpus_id = s.corpus_id AND p.rubric_hash = s.rubric_hash AND p.judge_hash = s.judge_hash
     AND p.genre_key = coalesce(t.genre, '')
    LEFT JOIN per_text x ON x.corpus_id = s.corpus_id AND x.rubric_hash = s.rubric_hash
     AND x.judge_hash = s.judge_hash AND x.text_id = t.text_id
    LEFT JOIN deep_root r ON r.corpus_id = s.corpus_id AND r.rubric_hash = s.rubric_hash
     AND r.judge_hash = s.judge_hash AND r.text_id = t.text_id
    LEFT JOIN dq d ON d.corpus_id = s.corpus_id AND d.rubric_hash = s.rubric_hash
     AND d.judge_hash = s.judge_hash AND d.text_id = t.text_id
),
final AS (
    SELECT *, round(CASE WHEN invert THEN 1 - root_value ELSE root_value END, 9) AS raw_score FROM scored
)
SELECT f.corpus_id, f.rubric_id, f.version, f.rubric_hash, f.judge_hash, f.text_id,
       CASE WHEN f.disqualifiers IS NOT NULL THEN 0.0 ELSE f.raw_score END AS score,
       CASE WHEN f.disqualifiers IS NOT NULL THEN f.disqualified_label
            WHEN f.raw_score IS NULL THEN NULL
            ELSE l.label END AS label,
       CASE WHEN f.disqualifiers IS NOT NULL THEN FALSE
            WHEN f.raw_score IS NULL THEN NULL
            WHEN f.rubric_pass IS NULL AND f.essential_minimum IS NULL THEN NULL
            ELSE coalesce(f.raw_score >= f.rubric_pass, TRUE)
                 AND (f.essential_minimum IS NULL
                      OR (f.essentials_scored AND coalesce(f.essential_min_score >= f.essential_minimum, TRUE)))
       END AS passed,
       coalesce(f.disqualifiers, []) AS disqualifiers,
       f.scored_criteria, f.planned_criteria,
       f.scored_criteria / f.planned_criteria AS coverage
FROM final f
ASOF LEFT JOIN rubric_labels l ON l.rubric_hash = f.rubric_hash AND f.raw_score >= l.min_score;


-- One row per run: work done, failures by kind, tokens, latency, coverage (the judgment set's cells
-- scored for the current texts / the cells the run planned, at most 1).
CREATE OR REPLACE VIEW unmat_run_summary AS
WITH c AS (
    SELECT run_id, count(*) AS landed_cells,
           count(*) FILTER (WHERE status = 'ok') AS ok_cells,
           count(*) FILTER (WHERE status <> 'ok') AS failed_cells,
           sum(attempts) AS calls, sum(attempts - 1) AS retries,
           sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
           sum(cached_tokens) AS cached_tokens,
           quantile_cont(latency_ms, 0.5) AS latency_p50_ms, quantile_cont(latency_ms, 0.95) AS latency_p95_ms,
           quantile_cont(queue_ms, 0.5) AS queue_p50_ms  -- time waiting in the client, apart from latency
    FROM completions WHERE adopted_from IS NULL GROUP BY run_id  -- adopted cells were judged by another run
),
adopted AS (
    SELECT run_id, count(*) AS adopted_cells FROM completions WHERE adopted_from IS NOT NULL GROUP BY run_id
),
e AS (
    SELECT run_id, string_agg(error_kind || '=' || n, ', ' ORDER BY error_kind) AS errors
    FROM (SELECT run_id, error_kind, count(*) AS n FROM completions
          WHERE error_kind IS NOT NULL AND adopted_from IS NULL GROUP BY ALL)
    GROUP BY run_id
),
j AS (
    SELECT run_id, count(*) FILTER (WHERE status = 'scored') AS scored_judgments,
           count(*) FILTER (WHERE status = 'unscored') AS unscored_judgments
    FROM judgments WHERE adopted_from IS NULL GROUP BY run_id
),
ok AS (  -- coverage counts the cells of each judgment set scored for the texts as they are now
    SELECT corpus_id, rubric_hash, judge_hash, count(*) AS ok_cells
    FROM current_completions WHERE status = 'ok' GROUP BY ALL
)
SELECT r.run_id, r.corpus_id, r.rubric_hash, r.judge_hash, r.model, r.strategy, r.status,
       r.planned_cells, r.skipped_cells,
       coalesce(c.landed_cells, 0) AS landed_cells, coalesce(c.ok_cells, 0) AS ok_cells,
       coalesce(c.failed_cells, 0) AS failed_cells, e.errors,
       coalesce(j.scored_judgments, 0) AS scored_judgments, coalesce(j.unscored_judgments, 0) AS unscored_judgments,
       coalesce(c.calls, 0) AS calls, coalesce(c.retries, 0) AS retries,
       coalesce(c.prompt_tokens, 0) AS prompt_tokens, coalesce(c.completion_tokens, 0) AS completion_tokens,
       c.latency_p50_ms, c.latency_p95_ms, c.queue_p50_ms,
       r.started_at, r.finished_at,
       epoch(r.finished_at - r.started_at) AS wall_s,
       least(1.0, coalesce(ok.ok_cells, 0) / nullif(r.planned_cells, 0)) AS coverage,
       coalesce(adopted.adopted_cells, 0) AS adopted_cells,  -- of skipped_cells: copied from another version
       coalesce(c.cached_tokens, 0) AS cached_tokens, r.layout, r.layout_reason, r.minimum_prompt_tokens
FROM runs r LEFT JOIN c USING (run_id) LEFT JOIN e USING (run_id) LEFT JOIN j USING (run_id) LEFT JOIN adopted USING (run_id)
LEFT JOIN ok ON ok.corpus_id = r.corpus_id AND ok.rubric_hash = r.rubric_hash AND ok.judge_hash = r.judge_hash;

-- Pairwise verdicts (one row per pair, criterion and judge), from the judgments of both orders.
CREATE OR REPLACE VIEW unmat_pair_verdicts AS
WITH v AS (
    SELECT j.corpus_id, j.rubric_hash, j.judge_hash, j.criterion_id,
           json_extract_string(t.metadata, '$.pair_id') AS pair_id,
           json_extract_string(t.metadata, '$.order') AS pair_order,
           json_extract_string(t.metadata, '$.label') AS label,
           json_extract_string(t.metadata, '$.system_a') AS system_a,
           json_extract_string(t.metadata, '$.system_b') AS system_b,
           json_extract_string(j.value, '$') AS slot,  -- as written: a = the response shown first
           j.rationale
    FROM current_judgments j
    JOIN texts t ON t.corpus_id = j.corpus_id AND t.text_id = j.text_id AND t.removed_at IS NULL
    WHERE j.status = 'scored' AND t.metadata LIKE '%"pair_id"%'
),
own AS (  -- the verdict in the pair's terms: in order ba, slot a is response_b
    SELECT *, CASE WHEN pair_order = 'ba' AND slot = 'a' THEN 'b' WHEN pair_order = 'ba' AND slot = 'b' THEN 'a'
                   ELSE slot END AS verdict
    FROM v
)
SELECT ab.corpus_id, ab.rubric_hash, ab.judge_hash, ab.pair_id, ab.criterion_id, ab.label, ab.system_a, ab.system_b,
       ab.verdict AS verdict_ab, ba.verdict AS verdict_ba,
       ab.verdict = ba.verdict AS consistent,
       ab.slot = ba.slot AND ab.slot <> 'tie' AS follows_position,
       CASE WHEN ab.verdict = ba.verdict THEN ab.verdict ELSE 'tie' END AS verdict,
       ab.rationale AS rationale_ab, ba.rationale AS rationale_ba
FROM own ab
JOIN own ba ON ba.corpus_id = ab.corpus_id AND ba.rubric_hash = ab.rubric_hash AND ba.judge_hash = ab.judge_hash
 AND ba.pair_id = ab.pair_id AND ba.criterion_id = ab.criterion_id AND ba.pair_order = 'ba'
WHERE ab.pair_order = 'ab';

-- Cost per run at the prices in model_prices: every call priced again on every question.
CREATE OR REPLACE VIEW unmat_run_costs AS
SELECT c.run_id, r.corpus_id, r.rubric_hash, r.judge_hash, r.model,
       sum(c.prompt_tokens) AS prompt_tokens, sum(c.completion_tokens) AS completion_tokens,
       sum(call_usd(c.prompt_tokens, c.cached_tokens, c.completion_tokens, c.output_mode,
                    p.input_per_mtok, p.cached_input_per_mtok, p.output_per_mtok)) AS usd,
       any_value(r.estimated_usd) AS estimated_usd, any_value(r.budget_usd) AS budget_usd,
       -- as views.sql: the billed cached tokens times the input rate less the cached one (NULL without a price)
       sum(call_usd(c.prompt_tokens, c.cached_tokens, c.completion_tokens, c.output_mode, 0, 1e6, 0))
           * (any_value(p.input_per_mtok) - coalesce(any_value(p.cached_input_per_mtok), any_value(p.input_per_mtok)))
           / 1e6 AS cache_saved_usd
FROM completions c JOIN runs r USING (run_id) LEFT JOIN model_prices p ON p.model = r.model
GROUP BY ALL;
