-- Analytics views. A "judgment set" is one (corpus, rubric version, judge setup) that some run
-- scored; every aggregate is per judgment set and shows its coverage (scored / planned).

CREATE OR REPLACE VIEW judgment_sets AS
SELECT DISTINCT corpus_id, rubric_hash, judge_hash FROM runs;

-- One row per text and active criterion: the mean unit score over the scored samples.
CREATE OR REPLACE VIEW criterion_scores AS
SELECT s.corpus_id, s.rubric_hash, s.judge_hash, t.text_id, c.criterion_id,
       c.weight, c.importance, c.pass_threshold, c.points,
       count(j.cell_key)                      AS judgments,
       count(j.unit_score)                    AS scored,
       avg(j.unit_score)                      AS unit_score,
       stddev_samp(j.unit_score)              AS unit_stddev,
       avg(j.unit_score) >= any_value(c.pass_threshold) AS passed
FROM judgment_sets s
JOIN texts t USING (corpus_id)
JOIN criteria c ON c.rubric_hash = s.rubric_hash
 AND (len(c.genre) = 0 OR list_contains(c.genre, t.genre))
LEFT JOIN judgments j ON j.corpus_id = s.corpus_id AND j.rubric_hash = s.rubric_hash
 AND j.judge_hash = s.judge_hash AND j.text_id = t.text_id AND j.criterion_id = c.criterion_id
GROUP BY s.corpus_id, s.rubric_hash, s.judge_hash, t.text_id, c.criterion_id,
         c.weight, c.importance, c.pass_threshold, c.points;

-- Tree aggregation, bottom up: leaves are the scored criteria; each round recomputes the parents
-- of the nodes that changed in the round before, from all of their scored children.
CREATE OR REPLACE VIEW node_scores AS
WITH RECURSIVE vals(corpus_id, rubric_hash, judge_hash, text_id, node_id, v, met)
USING KEY (corpus_id, rubric_hash, judge_hash, text_id, node_id) AS (
    SELECT corpus_id, rubric_hash, judge_hash, text_id, criterion_id, unit_score, passed
    FROM criterion_scores WHERE unit_score IS NOT NULL
    UNION
    SELECT c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, g.node_id,
           CASE g.aggregation
               WHEN 'weighted_mean' THEN sum(k.weight * c.v) / nullif(sum(k.weight), 0)
               WHEN 'weighted_sum'  THEN sum(k.weight * c.v)
               WHEN 'min'           THEN min(c.v)
               WHEN 'max'           THEN max(c.v)
               WHEN 'all'           THEN bool_and(c.met)::DOUBLE
               WHEN 'any'           THEN bool_or(c.met)::DOUBLE
               WHEN 'points'        THEN CASE WHEN sum(greatest(coalesce(cr.points, 0), 0)) > 0 THEN
                    greatest(0, least(1, sum(CASE WHEN c.met THEN coalesce(cr.points, 0) ELSE 0 END)
                                         / sum(greatest(coalesce(cr.points, 0), 0)))) END
           END AS v,
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

-- Disqualifier hits of all three kinds. Pattern disqualifiers look at the text under test only.
CREATE OR REPLACE VIEW disqualifier_hits AS
SELECT s.corpus_id, s.rubric_hash, s.judge_hash, h.text_id, d.disqualifier_id, 'pattern' AS kind,
       string_agg(h.pattern_id, ',' ORDER BY h.pattern_id) AS detail
FROM judgment_sets s
JOIN rubric_disqualifiers d ON d.rubric_hash = s.rubric_hash AND d.kind = 'pattern'
JOIN pattern_hits h ON h.corpus_id = s.corpus_id AND h.rubric_hash = s.rubric_hash
 AND h.hits > 0 AND list_contains(d.patterns, h.pattern_id)
JOIN texts t ON t.corpus_id = h.corpus_id AND t.text_id = h.text_id AND t.sha256 = h.text_sha256
GROUP BY ALL
UNION ALL
SELECT cs.corpus_id, cs.rubric_hash, cs.judge_hash, cs.text_id, d.disqualifier_id, 'criterion',
       d.criterion_id || '=' || round(cs.unit_score, 4)
FROM criterion_scores cs
JOIN rubric_disqualifiers d ON d.rubric_hash = cs.rubric_hash AND d.kind = 'criterion'
 AND d.criterion_id = cs.criterion_id AND cs.unit_score <= d.threshold
UNION ALL
SELECT c.corpus_id, c.rubric_hash, c.judge_hash, c.text_id, d.disqualifier_id, 'judge',
       string_agg(DISTINCT c.unit_id, ',')
FROM completions c
JOIN rubric_disqualifiers d ON d.rubric_hash = c.rubric_hash AND d.kind = 'judge'
 AND list_contains(c.declared_disqualifiers, d.disqualifier_id)
GROUP BY ALL;

-- Per text: the rubric's score, label and pass/fail, with coverage.
CREATE OR REPLACE VIEW text_scores AS
WITH coverage AS (
    SELECT corpus_id, rubric_hash, judge_hash, text_id,
           count(*) AS planned_criteria, count(unit_score) AS scored_criteria,
           bool_and(importance <> 'essential' OR unit_score IS NOT NULL) AS essentials_scored,
           min(CASE WHEN importance = 'essential' THEN unit_score END) AS essential_min_score
    FROM criterion_scores GROUP BY ALL
),
root AS (
    SELECT n.corpus_id, n.rubric_hash, n.judge_hash, n.text_id, n.value
    FROM node_scores n JOIN rubric_nodes r ON r.rubric_hash = n.rubric_hash AND r.node_id = n.node_id
    WHERE r.parent_id IS NULL AND NOT r.is_leaf
),
dq AS (
    SELECT corpus_id, rubric_hash, judge_hash, text_id, list(DISTINCT disqualifier_id ORDER BY disqualifier_id) AS disqualifiers
    FROM disqualifier_hits GROUP BY ALL
),
scored AS (
    SELECT c.*, rb.rubric_id, rb.version, rb.pass_threshold AS rubric_pass, rb.essential_minimum,
           rb.disqualified_label, d.disqualifiers,
           CASE WHEN rb.invert THEN 1 - r.value ELSE r.value END AS raw_score
    FROM coverage c
    JOIN rubrics rb ON rb.rubric_hash = c.rubric_hash
    LEFT JOIN root r ON r.corpus_id = c.corpus_id AND r.rubric_hash = c.rubric_hash
     AND r.judge_hash = c.judge_hash AND r.text_id = c.text_id
    LEFT JOIN dq d ON d.corpus_id = c.corpus_id AND d.rubric_hash = c.rubric_hash
     AND d.judge_hash = c.judge_hash AND d.text_id = c.text_id
)
SELECT s.corpus_id, s.rubric_id, s.version, s.rubric_hash, s.judge_hash, s.text_id,
       CASE WHEN s.disqualifiers IS NOT NULL AND s.raw_score IS NOT NULL THEN 0.0 ELSE s.raw_score END AS score,
       CASE WHEN s.raw_score IS NULL THEN NULL
            WHEN s.disqualifiers IS NOT NULL THEN s.disqualified_label
            ELSE (SELECT arg_max(l.label, l.min_score) FROM rubric_labels l
                  WHERE l.rubric_hash = s.rubric_hash AND l.min_score <= s.raw_score) END AS label,
       CASE WHEN s.raw_score IS NULL THEN NULL
            WHEN s.disqualifiers IS NOT NULL THEN FALSE
            WHEN s.rubric_pass IS NULL AND s.essential_minimum IS NULL THEN NULL
            ELSE coalesce(s.raw_score >= s.rubric_pass, TRUE)
                 AND (s.essential_minimum IS NULL
                      OR (s.essentials_scored AND coalesce(s.essential_min_score >= s.essential_minimum, TRUE)))
       END AS passed,
       coalesce(s.disqualifiers, []) AS disqualifiers,
       s.scored_criteria, s.planned_criteria,
       s.scored_criteria / s.planned_criteria AS coverage
FROM scored s;

-- Pattern hits per text and per pattern.
CREATE OR REPLACE VIEW pattern_hit_counts AS
SELECT h.corpus_id, h.rubric_hash, h.text_id, h.pattern_id, h.hits
FROM pattern_hits h
JOIN texts t ON t.corpus_id = h.corpus_id AND t.text_id = h.text_id AND t.sha256 = h.text_sha256;

CREATE OR REPLACE VIEW pattern_summary AS
SELECT corpus_id, rubric_hash, pattern_id,
       count(*) FILTER (WHERE hits > 0) AS texts_hit,
       count(*) AS texts_checked,
       sum(hits) AS total_hits,
       count(*) FILTER (WHERE hits > 0) / count(*) AS hit_rate
FROM pattern_hit_counts GROUP BY ALL;

-- One row per run: work done, failures by kind, tokens, latency, coverage.
CREATE OR REPLACE VIEW run_summary AS
WITH c AS (
    SELECT run_id, count(*) AS landed_cells,
           count(*) FILTER (WHERE status = 'ok') AS ok_cells,
           count(*) FILTER (WHERE status <> 'ok') AS failed_cells,
           sum(attempts) AS calls, sum(attempts - 1) AS retries,
           sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
           quantile_cont(latency_ms, 0.5) AS latency_p50_ms, quantile_cont(latency_ms, 0.95) AS latency_p95_ms
    FROM completions GROUP BY run_id
),
e AS (
    SELECT run_id, string_agg(error_kind || '=' || n, ', ' ORDER BY error_kind) AS errors
    FROM (SELECT run_id, error_kind, count(*) AS n FROM completions WHERE error_kind IS NOT NULL GROUP BY ALL)
    GROUP BY run_id
),
j AS (
    SELECT run_id, count(*) FILTER (WHERE status = 'scored') AS scored_judgments,
           count(*) FILTER (WHERE status = 'unscored') AS unscored_judgments
    FROM judgments GROUP BY run_id
)
SELECT r.run_id, r.corpus_id, r.rubric_hash, r.judge_hash, r.model, r.strategy, r.status,
       r.planned_cells, r.skipped_cells,
       coalesce(c.landed_cells, 0) AS landed_cells, coalesce(c.ok_cells, 0) AS ok_cells,
       coalesce(c.failed_cells, 0) AS failed_cells, e.errors,
       coalesce(j.scored_judgments, 0) AS scored_judgments, coalesce(j.unscored_judgments, 0) AS unscored_judgments,
       coalesce(c.calls, 0) AS calls, coalesce(c.retries, 0) AS retries,
       coalesce(c.prompt_tokens, 0) AS prompt_tokens, coalesce(c.completion_tokens, 0) AS completion_tokens,
       c.latency_p50_ms, c.latency_p95_ms,
       r.started_at, r.finished_at,
       epoch(r.finished_at - r.started_at) AS wall_s,
       (r.skipped_cells + coalesce(c.landed_cells, 0)) / nullif(r.planned_cells, 0) AS coverage
FROM runs r LEFT JOIN c USING (run_id) LEFT JOIN e USING (run_id) LEFT JOIN j USING (run_id);
