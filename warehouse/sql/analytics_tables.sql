-- The materialised analytics: per judgment set, the criterion, node and text scores and the
-- disqualifier hits, one row per text as views.sql's criterion_scores / node_scores /
-- disqualifier_hits / text_scores show them (those views read these tables). They are kept current
-- by analytics_refresh.sql, text by text, in the same transaction as the write that changed a
-- text's inputs (warehouse/analytics.py); `rubricflow rebuild` recomputes them from the raw rows.
-- When this file or analytics_refresh.sql changes, a writer drops and rebuilds them (the hash of
-- both files is kept in analytics_state).

CREATE TABLE IF NOT EXISTS analytics_state (
    definition_sha VARCHAR NOT NULL,  -- sha256 of analytics_tables.sql + analytics_refresh.sql
    rebuilt_at     TIMESTAMP NOT NULL
);

-- Texts whose analytics must be recomputed: written by every step that changes what a text's
-- scores are made of (judgments landed or adopted, the text changed or removed, labels, pattern
-- counts, a new judgment set), consumed by the refresh in the same transaction.
CREATE TABLE IF NOT EXISTS stale_texts (
    corpus_id VARCHAR NOT NULL,
    text_id   VARCHAR NOT NULL
);

-- What keeping the tables current costs: one row per refresh (a shard's load, an ingest...).
CREATE TABLE IF NOT EXISTS analytics_refreshes (
    refreshed_at TIMESTAMP NOT NULL,
    texts        BIGINT NOT NULL,    -- texts recomputed
    seconds      DOUBLE NOT NULL
);

-- Runs whose counts must be recomputed: a load's runs, and the runs whose cells it replaced.
CREATE TABLE IF NOT EXISTS stale_runs (
    run_id VARCHAR NOT NULL
);

-- Per run (views.sql: run_summary): cells, calls, tokens, latency, errors and judgments.
CREATE TABLE IF NOT EXISTS mat_run_stats (
    run_id             VARCHAR NOT NULL,
    landed_cells       BIGINT,
    ok_cells           BIGINT,
    failed_cells       BIGINT,
    calls              HUGEINT,
    retries            HUGEINT,
    prompt_tokens      HUGEINT,
    completion_tokens  HUGEINT,
    latency_p50_ms     DOUBLE,
    latency_p95_ms     DOUBLE,
    queue_p50_ms       DOUBLE,
    errors             VARCHAR,
    scored_judgments   BIGINT,
    unscored_judgments BIGINT,
    adopted_cells      BIGINT,
    -- what the run's calls are billed for (views.sql: run_costs), summed as call_usd prices one
    -- call: counts made sane, the Batch API's at half; a run's cost is then these three times
    -- the model's rates, without pricing every call again
    billed_input_tokens      DOUBLE,
    billed_cached_tokens     DOUBLE,
    billed_completion_tokens DOUBLE
);
-- (added after the table was first released)
ALTER TABLE mat_run_stats ADD COLUMN IF NOT EXISTS billed_input_tokens DOUBLE;
ALTER TABLE mat_run_stats ADD COLUMN IF NOT EXISTS cached_tokens HUGEINT;  -- served from a prefix cache
ALTER TABLE mat_run_stats ADD COLUMN IF NOT EXISTS billed_cached_tokens DOUBLE;
ALTER TABLE mat_run_stats ADD COLUMN IF NOT EXISTS billed_completion_tokens DOUBLE;

-- Per text and judgment set: the cells scored ok for the text as it is now (run_summary's coverage).
CREATE TABLE IF NOT EXISTS mat_ok_cells (
    corpus_id   VARCHAR NOT NULL,
    rubric_hash VARCHAR NOT NULL,
    judge_hash  VARCHAR NOT NULL,
    text_id     VARCHAR NOT NULL,
    ok_cells    BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS mat_criterion_scores (
    corpus_id      VARCHAR NOT NULL,
    rubric_hash    VARCHAR NOT NULL,
    judge_hash     VARCHAR NOT NULL,
    text_id        VARCHAR NOT NULL,
    criterion_id   VARCHAR NOT NULL,
    weight         DOUBLE,
    importance     VARCHAR,
    pass_threshold DOUBLE,
    points         DOUBLE,
    judgments      BIGINT,
    scored         BIGINT,
    unit_score     DOUBLE,
    unit_stddev    DOUBLE,
    unit_min       DOUBLE,
    unit_max       DOUBLE,
    passed         BOOLEAN,
    weighted_unit_score DOUBLE
);

CREATE TABLE IF NOT EXISTS mat_node_scores (
    corpus_id   VARCHAR NOT NULL,
    rubric_hash VARCHAR NOT NULL,
    judge_hash  VARCHAR NOT NULL,
    text_id     VARCHAR NOT NULL,
    node_id     VARCHAR NOT NULL,
    value       DOUBLE,
    met         BOOLEAN
);

CREATE TABLE IF NOT EXISTS mat_disqualifier_hits (
    corpus_id       VARCHAR NOT NULL,
    rubric_hash     VARCHAR NOT NULL,
    judge_hash      VARCHAR NOT NULL,
    text_id         VARCHAR NOT NULL,
    disqualifier_id VARCHAR NOT NULL,
    kind            VARCHAR NOT NULL,
    detail          VARCHAR
);

-- engine: soft judgment-scoped output constraints a text's whole answer broke (one row per sample;
-- views.sql: constraint_warnings). Hard ones are disqualifier hits of kind 'constraint'.
CREATE TABLE IF NOT EXISTS mat_constraint_warnings (
    corpus_id     VARCHAR NOT NULL,
    rubric_hash   VARCHAR NOT NULL,
    judge_hash    VARCHAR NOT NULL,
    text_id       VARCHAR NOT NULL,
    sample        INTEGER NOT NULL,
    constraint_id VARCHAR NOT NULL,
    problem       VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS mat_text_scores (
    corpus_id        VARCHAR NOT NULL,
    rubric_id        VARCHAR,
    version          VARCHAR,
    rubric_hash      VARCHAR NOT NULL,
    judge_hash       VARCHAR NOT NULL,
    text_id          VARCHAR NOT NULL,
    score            DOUBLE,
    label            VARCHAR,
    passed           BOOLEAN,
    disqualifiers    VARCHAR[],
    scored_criteria  BIGINT,
    planned_criteria BIGINT,
    coverage         DOUBLE
);

-- Per pair, criterion and judge (views.sql: pair_verdicts): the verdict of each order in the pair's
-- own terms and the final verdict; text_id_ab / text_id_ba name the pair's two texts (what the
-- refresh keys on).
CREATE TABLE IF NOT EXISTS mat_pair_verdicts (
    corpus_id        VARCHAR NOT NULL,
    rubric_hash      VARCHAR NOT NULL,
    judge_hash       VARCHAR NOT NULL,
    pair_id          VARCHAR NOT NULL,
    criterion_id     VARCHAR NOT NULL,
    label            VARCHAR,
    system_a         VARCHAR,
    system_b         VARCHAR,
    verdict_ab       VARCHAR,
    verdict_ba       VARCHAR,
    consistent       BOOLEAN,
    follows_position BOOLEAN,
    verdict          VARCHAR,
    rationale_ab     VARCHAR,
    rationale_ba     VARCHAR,
    text_id_ab       VARCHAR NOT NULL,
    text_id_ba       VARCHAR NOT NULL
);

-- Each corpus's analytics version: every refresh that touches a text of the corpus moves it on,
-- so a result computed from the analytics knows whether it is still current.
CREATE TABLE IF NOT EXISTS analytics_versions (
    corpus_id VARCHAR PRIMARY KEY,
    version   BIGINT NOT NULL
);

-- A/B comparisons as `compare` computed them (tasks/stats/compare.py), one per corpus and pair of
-- sides: read back while the corpus's analytics version is the one they were computed at, and
-- recomputed when a run on the corpus finishes.
CREATE TABLE IF NOT EXISTS ab_results (
    corpus_id       VARCHAR NOT NULL,
    sides           VARCHAR NOT NULL,  -- JSON: {"a": [[rubric_hash, judge_hash], ...], "b": [...]}
    options         VARCHAR NOT NULL,  -- JSON: top, resamples, seed
    corpus_version  BIGINT NOT NULL,
    computed_at     TIMESTAMP NOT NULL,
    seconds         DOUBLE NOT NULL,   -- what computing it took
    result          JSON NOT NULL,     -- Comparison.to_json()
    PRIMARY KEY (corpus_id, sides)
);
