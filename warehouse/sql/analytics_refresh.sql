-- Recompute the materialised analytics (analytics_tables.sql) of the texts in stale_texts, for
-- every judgment set, and empty stale_texts. Run inside the transaction of the write that marked
-- them (warehouse/analytics.py), so the tables never disagree with the raw rows. Each step reads
-- only the scoped texts' rows; the steps after the criterion scores read the small temp tables of
-- the steps before, not the whole materialised tables. Its pairwise verdicts
-- (analytics_refresh_pairs.sql) and run stats (analytics_refresh_runs.sql) are files of their
-- own, run after this one only when the scope holds a pair's text or a run is marked
-- (warehouse/analytics.py: each costs a refresh ~10 ms of planning with nothing to do);
-- refresh_scope is left for them.

-- Every per-text table is written in (corpus, judgment set, text) order: DuckDB skips row groups by
-- their min/max, so a text's page reads one row group per judgment set and a judgment set's pages
-- skip the others' (mat_text_scores in hash order: one text's scores 24 ms at 20M judgments).

-- $batch: at most this many texts (in text order, so that the scans below read neighbouring row
-- groups), the rest stay marked for the next batch.
CREATE OR REPLACE TEMP TABLE refresh_scope AS
SELECT DISTINCT corpus_id, text_id FROM stale_texts ORDER BY corpus_id, text_id LIMIT $batch;
DELETE FROM stale_texts s USING refresh_scope r WHERE s.corpus_id = r.corpus_id AND s.text_id = r.text_id;

DELETE FROM mat_criterion_scores m USING refresh_scope s WHERE m.corpus_id = s.corpus_id AND m.text_id = s.text_id;
DELETE FROM mat_node_scores m USING refresh_scope s WHERE m.corpus_id = s.corpus_id AND m.text_id = s.text_id;
DELETE FROM mat_disqualifier_hits m USING refresh_scope s WHERE m.corpus_id = s.corpus_id AND m.text_id = s.text_id;
DELETE FROM mat_text_scores m USING refresh_scope s WHERE m.corpus_id = s.corpus_id AND m.text_id = s.text_id;
DELETE FROM mat_constraint_warnings m USING refresh_scope s WHERE m.corpus_id = s.corpus_id AND m.text_id = s.text_id;
DELETE FROM mat_ok_cells m USING refresh_scope s WHERE m.corpus_id = s.corpus_id AND m.text_id = s.text_id;

-- The scoped texts as they are now (removed texts left out), with their version (views.sql: current_texts).
CREATE OR REPLACE TEMP TABLE refresh_texts AS
SELECT t.corpus_id, t.text_id, t.sha256, text_version(t.sha256, t.input, t.context, t.genre) AS version, t.genre
FROM texts t JOIN refresh_scope s ON s.corpus_id = t.corpus_id AND s.text_id = t.text_id
WHERE t.removed_at IS NULL;

-- Every score that meets a threshold (a criterion's pass mark, a disqualifier's, the rubric's pass
-- mark and labels) is made at 9 decimals (rubrics/scoring.py: SCORE_DIGITS) by exact arithmetic on
-- whole billionths (views.sql: exact_mean, exact_weighted_mean): a double sum adds in whatever order
-- DuckDB's threads give, so 0.75 could come out 0.7499999999999999, and a mean ending in a 5 at the
-- tenth decimal rounded either way, flipping a label; exact, the same judgments give the same bits
-- (and rf.Judge's, which computes alike).

-- Criterion scores: the mean unit score over the scored samples of each text's current version,
-- and the mean logprob-weighted unit score where the endpoint returned logprobs.
CREATE OR REPLACE TEMP TABLE refresh_criteria AS
SELECT j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, j.criterion_id,
       c.weight, c.importance, c.pass_threshold, c.points,
       count(*) AS judgments, count(j.unit_score) AS scored,
       exact_mean(j.unit_score) AS unit_score, exact_stddev(j.unit_score) AS unit_stddev,
       min(j.unit_score) AS unit_min, max(j.unit_score) AS unit_max,
       exact_mean(j.unit_score) >= c.pass_threshold AS passed,
       exact_mean(j.weighted_unit_score) AS weighted_unit_score  -- logprob-weighted (G-Eval); NULL without logprobs
FROM judgments j
JOIN refresh_texts t ON t.corpus_id = j.corpus_id AND t.text_id = j.text_id AND t.version = j.text_sha256
JOIN criteria c ON c.rubric_hash = j.rubric_hash AND c.criterion_id = j.criterion_id
WHERE current_rendering(j.rubric_hash, j.unit_hash)  -- cells sent an older wording are history
GROUP BY j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, j.criterion_id,
         c.weight, c.importance, c.pass_threshold, c.points;
INSERT INTO mat_criterion_scores BY NAME SELECT * FROM refresh_criteria ORDER BY corpus_id, rubric_hash, judge_hash, text_id;

-- Tree aggregation for rubrics with groups, bottom up: leaves are the scored criteria and human
-- labels of them (as judge 'label:<rater>': a hand-graded tree aggregates like a judged one, see
-- graded_nodes.sql); each round recomputes the parents of the nodes that changed in the round
-- before, from all of their scored children. A rubric without groups is scored by text_scores alone.
CREATE OR REPLACE TEMP TABLE refresh_nodes AS
WITH RECURSIVE vals(corpus_id, rubric_hash, judge_hash, text_id, node_id, v, met)
USING KEY (corpus_id, rubric_hash, judge_hash, text_id, node_id) AS (
    SELECT * FROM (
        SELECT m.corpus_id, m.rubric_hash, m.judge_hash, m.text_id, m.criterion_id, m.unit_score, m.passed
        FROM refresh_criteria m
        JOIN rubrics r ON r.rubric_hash = m.rubric_hash AND NOT r.is_flat
        WHERE m.unit_score IS NOT NULL
        UNION ALL
        SELECT l.corpus_id, c.rubric_hash, 'label:' || l.rater, l.text_id, l.criterion_id,
               exact_mean(coalesce((l.score - c.scale_min) / nullif(c.scale_max - c.scale_min, 0), l.score)) AS v,
               v >= c.pass_threshold
        FROM labels l
        JOIN refresh_scope s ON s.corpus_id = l.corpus_id AND s.text_id = l.text_id
        JOIN criteria c ON c.criterion_id = l.criterion_id
        JOIN rubrics r ON r.rubric_hash = c.rubric_hash AND NOT r.is_flat
        GROUP BY l.corpus_id, c.rubric_hash, l.rater, l.text_id, l.criterion_id, c.pass_threshold
    )
    UNION
    SELECT c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, g.node_id,
           round(CASE g.aggregation
               WHEN 'weighted_mean' THEN CASE WHEN d.declared = 0 THEN 0  -- PaperBench's score_from_children (seed 003)
                                              ELSE exact_weighted_mean(k.weight, c.v) END
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
    JOIN (SELECT rubric_hash, parent_id, sum(weight) AS declared FROM rubric_nodes GROUP BY ALL) d
      ON d.rubric_hash = g.rubric_hash AND d.parent_id = g.node_id  -- the children's weights as written
    JOIN rubric_nodes k ON k.rubric_hash = p.rubric_hash AND k.parent_id = p.parent_id
    JOIN recurring.vals c ON c.corpus_id = p.corpus_id AND c.rubric_hash = p.rubric_hash
     AND c.judge_hash = p.judge_hash AND c.text_id = p.text_id AND c.node_id = k.node_id
     AND c.v IS NOT NULL  -- an unscored group is left out of its parent, its weight too
    LEFT JOIN criteria cr ON cr.rubric_hash = k.rubric_hash AND cr.criterion_id = k.node_id
    GROUP BY c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, g.node_id, g.aggregation, d.declared
)
SELECT corpus_id, rubric_hash, judge_hash, text_id, node_id, v AS value, coalesce(met, v >= 0.5) AS met
FROM vals;
INSERT INTO mat_node_scores BY NAME SELECT * FROM refresh_nodes ORDER BY corpus_id, rubric_hash, judge_hash, text_id;

-- The scoped texts' completions of their current version: the cells scored ok, and what the
-- judge declared (the judge disqualifiers below).
CREATE OR REPLACE TEMP TABLE refresh_completions AS
SELECT c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, c.unit_id, c.status, c.declared_disqualifiers,
       c.constraint_violations
FROM completions c
JOIN refresh_texts t ON t.corpus_id = c.corpus_id AND t.text_id = c.text_id AND t.version = c.text_sha256
WHERE current_rendering(c.rubric_hash, c.unit_hash);
INSERT INTO mat_ok_cells BY NAME
SELECT corpus_id, rubric_hash, judge_hash, text_id, count(*) AS ok_cells
FROM refresh_completions WHERE status = 'ok' GROUP BY ALL ORDER BY corpus_id, rubric_hash, judge_hash, text_id;

-- Judgment-scoped output constraints, checked on each sample's whole answer (every criterion's
-- rationale and evidence) in one pass over the scoped judgments, for both severities: the hard
-- ones disqualify (refresh_disqualifiers), the soft ones warn (mat_constraint_warnings).
-- judgment_constraint_problems gives 'severity:id: problem' (warehouse/judgment_constraints.py).
CREATE OR REPLACE TEMP TABLE refresh_judgment_problems AS
SELECT corpus_id, rubric_hash, judge_hash, text_id, sample, split_part(found, ':', 1) AS severity,
       split_part(found, ':', 2) AS constraint_id, substr(found, strpos(found, ': ') + 2) AS problem
FROM (SELECT j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, j.sample,
             unnest(judgment_constraint_problems(j.rubric_hash, list(j.criterion_id), list(j.rationale), list(j.evidence))) AS found
      FROM judgments j
      JOIN refresh_texts t ON t.corpus_id = j.corpus_id AND t.text_id = j.text_id AND t.version = j.text_sha256
      WHERE j.status = 'scored'
        AND j.rubric_hash IN (SELECT rubric_hash FROM rubrics WHERE regexp_matches(document::VARCHAR, '"scope":\s*"judgment"'))
      GROUP BY j.corpus_id, j.rubric_hash, j.judge_hash, j.text_id, j.sample);

-- Disqualifier hits of all four kinds, one row per text, disqualifier and cause (detail: the
-- pattern that matched, the criterion's score, or the call units that declared it or broke a hard
-- output constraint). Pattern
-- disqualifiers look at the text under test only.
CREATE OR REPLACE TEMP TABLE refresh_disqualifiers AS
WITH pattern_dq AS (
    SELECT rubric_hash, disqualifier_id, unnest(patterns) AS pattern_id
    FROM rubric_disqualifiers WHERE kind = 'pattern'
)
SELECT s.corpus_id, s.rubric_hash, s.judge_hash, h.text_id, d.disqualifier_id, 'pattern' AS kind,
       h.pattern_id AS detail
FROM pattern_hits h
JOIN refresh_texts t ON t.corpus_id = h.corpus_id AND t.text_id = h.text_id AND t.sha256 = h.text_sha256
JOIN pattern_dq d ON d.rubric_hash = h.rubric_hash AND d.pattern_id = h.pattern_id
JOIN judgment_sets s ON s.corpus_id = h.corpus_id AND s.rubric_hash = h.rubric_hash
WHERE h.hits > 0
UNION ALL
SELECT m.corpus_id, m.rubric_hash, m.judge_hash, m.text_id, d.disqualifier_id, 'criterion',
       d.criterion_id || '=' || round(m.unit_score, 4)
FROM refresh_criteria m
JOIN rubric_disqualifiers d ON d.rubric_hash = m.rubric_hash AND d.kind = 'criterion' AND d.criterion_id = m.criterion_id
WHERE m.unit_score <= d.threshold
UNION ALL
SELECT c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, d.disqualifier_id, 'judge',
       string_agg(DISTINCT c.unit_id, ',' ORDER BY c.unit_id)
FROM (SELECT corpus_id, rubric_hash, judge_hash, text_id, unit_id, unnest(declared_disqualifiers) AS disqualifier_id
      FROM refresh_completions WHERE len(declared_disqualifiers) > 0) c
JOIN rubric_disqualifiers d ON d.rubric_hash = c.rubric_hash AND d.kind = 'judge' AND d.disqualifier_id = c.disqualifier_id
GROUP BY ALL
UNION ALL  -- a hard output constraint the answer broke disqualifies under the constraint's id (detail: the call units)
SELECT corpus_id, rubric_hash, judge_hash, text_id, constraint_id, 'constraint', string_agg(DISTINCT unit_id, ',' ORDER BY unit_id)
FROM (SELECT corpus_id, rubric_hash, judge_hash, text_id, unit_id, unnest(constraint_violations) AS constraint_id
      FROM refresh_completions WHERE status = 'ok' AND len(constraint_violations) > 0)
GROUP BY ALL
UNION ALL  -- a hard judgment-scoped constraint, checked on the text's whole answer (refresh_judgment_problems)
SELECT DISTINCT corpus_id, rubric_hash, judge_hash, text_id, constraint_id, 'constraint', problem
FROM refresh_judgment_problems WHERE severity = 'hard';
INSERT INTO mat_disqualifier_hits BY NAME SELECT * FROM refresh_disqualifiers ORDER BY corpus_id, rubric_hash, judge_hash, text_id;

-- engine: a soft judgment-scoped constraint the text's whole answer broke, per sample (refresh_judgment_problems)
INSERT INTO mat_constraint_warnings BY NAME
SELECT corpus_id, rubric_hash, judge_hash, text_id, sample, constraint_id, problem
FROM refresh_judgment_problems WHERE severity = 'soft'
ORDER BY corpus_id, rubric_hash, judge_hash, text_id, sample, constraint_id;

-- Per text and judgment set: the rubric's score, label and pass/fail, with coverage (scored /
-- planned criteria). Every current text of a corpus has a row for every judgment set on it.
INSERT INTO mat_text_scores BY NAME
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
    FROM refresh_criteria GROUP BY ALL
),
planned AS (  -- active criteria per genre (genre-less criteria apply to every text)
    SELECT g.corpus_id, g.rubric_hash, g.judge_hash, g.genre_key, count(*) AS planned_criteria,
           count(*) FILTER (WHERE c.importance = 'essential') AS essentials
    FROM (SELECT DISTINCT s.corpus_id, s.rubric_hash, s.judge_hash, coalesce(t.genre, '') AS genre_key
          FROM judgment_sets s JOIN refresh_texts t ON t.corpus_id = s.corpus_id) g
    JOIN criteria c ON c.rubric_hash = g.rubric_hash AND (len(c.genre) = 0 OR list_contains(c.genre, g.genre_key))
    GROUP BY ALL
),
deep_root AS (
    SELECT n.corpus_id, n.rubric_hash, n.judge_hash, n.text_id, n.value
    FROM refresh_nodes n JOIN rubric_nodes r ON r.rubric_hash = n.rubric_hash AND r.node_id = n.node_id
    WHERE r.parent_id IS NULL AND NOT r.is_leaf
),
dq AS (
    SELECT corpus_id, rubric_hash, judge_hash, text_id,
           list(DISTINCT disqualifier_id ORDER BY disqualifier_id) AS disqualifiers
    FROM refresh_disqualifiers GROUP BY ALL
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
    JOIN refresh_texts t ON t.corpus_id = s.corpus_id
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
ASOF LEFT JOIN rubric_labels l ON l.rubric_hash = f.rubric_hash AND f.raw_score >= l.min_score
ORDER BY f.corpus_id, f.rubric_hash, f.judge_hash, f.text_id;

-- The corpora touched move to a new analytics version (results computed before are no longer current).
INSERT INTO analytics_versions
SELECT DISTINCT corpus_id, 0 FROM refresh_scope WHERE corpus_id NOT IN (SELECT corpus_id FROM analytics_versions);
UPDATE analytics_versions SET version = version + 1 WHERE corpus_id IN (SELECT corpus_id FROM refresh_scope);

DROP TABLE refresh_texts;
DROP TABLE refresh_criteria;
DROP TABLE refresh_nodes;
DROP TABLE refresh_disqualifiers;
DROP TABLE refresh_completions;
DROP TABLE refresh_judgment_problems;
