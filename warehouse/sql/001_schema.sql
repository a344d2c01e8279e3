-- rubricflow warehouse, schema version 1.
-- Keys: a text is (corpus_id, text_id); a rubric version is its content hash; a judge setup is
-- its config hash; a work cell is cell_key = sha256 of (text_id, text version, unit, rubric hash,
-- judge hash, sample, unit fingerprint: see the `render:` block at the end), where the text version (text_version() in views.sql, stored as
-- `text_sha256` in completions and judgments) covers everything the judge sees: the text, and its
-- input, context and genre when it has them. Every landing is idempotent by cell_key.

CREATE TABLE IF NOT EXISTS corpora (
    corpus_id      VARCHAR PRIMARY KEY,
    source         VARCHAR NOT NULL,
    parquet_path   VARCHAR NOT NULL,
    rows_ok        BIGINT NOT NULL,
    rows_quarantined BIGINT NOT NULL,
    ingested_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS texts (
    corpus_id  VARCHAR NOT NULL,
    text_id    VARCHAR NOT NULL,
    sha256     VARCHAR NOT NULL,
    text       VARCHAR NOT NULL,
    input      VARCHAR,
    context    VARCHAR,
    genre      VARCHAR,
    metadata   JSON,
    PRIMARY KEY (corpus_id, text_id)
);

CREATE TABLE IF NOT EXISTS rubrics (
    rubric_hash  VARCHAR PRIMARY KEY,
    rubric_id    VARCHAR NOT NULL,
    version      VARCHAR NOT NULL,
    title        VARCHAR,
    profile      VARCHAR,
    method       VARCHAR NOT NULL,   -- root aggregation
    is_flat      BOOLEAN NOT NULL,   -- no groups: the root combines the criteria directly
    invert       BOOLEAN NOT NULL,
    pass_threshold DOUBLE,
    essential_minimum DOUBLE,
    disqualified_label VARCHAR NOT NULL,
    source       VARCHAR,
    document     JSON NOT NULL,
    registered_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Every node of a rubric's tree: criteria are leaves, groups are inner nodes, and `__root__`
-- stands for the scoring root when the rubric names none.
CREATE TABLE IF NOT EXISTS rubric_nodes (
    rubric_hash  VARCHAR NOT NULL,
    node_id      VARCHAR NOT NULL,
    parent_id    VARCHAR,
    is_leaf      BOOLEAN NOT NULL,
    aggregation  VARCHAR,            -- groups only
    weight       DOUBLE NOT NULL,
    PRIMARY KEY (rubric_hash, node_id)
);

CREATE TABLE IF NOT EXISTS criteria (
    rubric_hash    VARCHAR NOT NULL,
    criterion_id   VARCHAR NOT NULL,
    title          VARCHAR,
    description    VARCHAR,
    scale_kind     VARCHAR NOT NULL,
    weight         DOUBLE NOT NULL,
    importance     VARCHAR NOT NULL,
    pass_threshold DOUBLE NOT NULL,  -- unit score at which it "meets" (default 0.5)
    points         DOUBLE,
    genre          VARCHAR[],
    scale_min      DOUBLE,           -- native range of ordinal/numeric/binary scales (labels are native)
    scale_max      DOUBLE,
    unit_step      DOUBLE,           -- one scale step in unit terms ("within one"); NULL for nominal
    PRIMARY KEY (rubric_hash, criterion_id)
);
-- Warehouses made before the scale columns existed gain them (empty for rubrics registered then).
ALTER TABLE criteria ADD COLUMN IF NOT EXISTS scale_min DOUBLE;
ALTER TABLE criteria ADD COLUMN IF NOT EXISTS scale_max DOUBLE;
ALTER TABLE criteria ADD COLUMN IF NOT EXISTS unit_step DOUBLE;

CREATE TABLE IF NOT EXISTS rubric_patterns (
    rubric_hash VARCHAR NOT NULL,
    pattern_id  VARCHAR NOT NULL,
    regex       VARCHAR NOT NULL,    -- RE2, flags inlined
    PRIMARY KEY (rubric_hash, pattern_id)
);

CREATE TABLE IF NOT EXISTS rubric_disqualifiers (
    rubric_hash    VARCHAR NOT NULL,
    disqualifier_id VARCHAR NOT NULL,
    kind           VARCHAR NOT NULL, -- pattern | criterion | judge
    patterns       VARCHAR[],
    criterion_id   VARCHAR,
    threshold      DOUBLE,
    description    VARCHAR,
    PRIMARY KEY (rubric_hash, disqualifier_id)
);

CREATE TABLE IF NOT EXISTS rubric_labels (
    rubric_hash VARCHAR NOT NULL,
    label       VARCHAR NOT NULL,
    min_score   DOUBLE NOT NULL
);

CREATE TABLE IF NOT EXISTS runs (
    run_id         VARCHAR PRIMARY KEY,
    corpus_id      VARCHAR NOT NULL,
    rubric_hash    VARCHAR NOT NULL,
    judge_hash     VARCHAR NOT NULL,
    model          VARCHAR NOT NULL,
    strategy       VARCHAR NOT NULL,
    samples        INTEGER NOT NULL,
    parameters     JSON NOT NULL,    -- never holds secrets
    status         VARCHAR NOT NULL, -- running | completed | failed
    planned_cells  BIGINT,
    skipped_cells  BIGINT,           -- already landed by an earlier run (cache / resume)
    started_at     TIMESTAMP NOT NULL,
    finished_at    TIMESTAMP,
    message        VARCHAR
);

-- completions and judgments hold one row per cell_key (per cell_key and criterion_id), kept so by
-- the two writes that add rows (load_landed.sql, adopt_cells.sql: each deletes the keys it brings
-- first) rather than by a primary key: a key's index is held in memory whole, loaded again by every
-- writer (each shard load), and grows with every judgment the warehouse holds (#22).
CREATE TABLE IF NOT EXISTS completions (
    cell_key          VARCHAR NOT NULL,
    run_id            VARCHAR NOT NULL,
    corpus_id         VARCHAR NOT NULL,
    text_id           VARCHAR NOT NULL,
    text_sha256       VARCHAR NOT NULL,  -- the text version judged (text_version() in views.sql)
    unit_id           VARCHAR NOT NULL,
    rubric_hash       VARCHAR NOT NULL,
    judge_hash        VARCHAR NOT NULL,
    sample            INTEGER NOT NULL,
    model             VARCHAR,
    system_fingerprint VARCHAR,
    response_id       VARCHAR,
    output_mode       VARCHAR,       -- as sent: json_schema | json_object | tools | verdict_tools | text | decision; batch:<mode>
    raw_response      VARCHAR,       -- the completion's content or tool arguments, verbatim
    finish_reason     VARCHAR,
    prompt_tokens     BIGINT,
    completion_tokens BIGINT,
    latency_ms        DOUBLE,
    attempts          INTEGER NOT NULL,
    status            VARCHAR NOT NULL, -- ok | failed
    error_kind        VARCHAR,       -- transient | deterministic | parse | refusal | truncated
    error             VARCHAR,
    declared_disqualifiers VARCHAR[],
    created_at        TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS judgments (
    cell_key      VARCHAR NOT NULL,
    criterion_id  VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    corpus_id     VARCHAR NOT NULL,
    text_id       VARCHAR NOT NULL,
    rubric_hash   VARCHAR NOT NULL,
    judge_hash    VARCHAR NOT NULL,
    sample        INTEGER NOT NULL,
    value         JSON,              -- as the judge gave it
    unit_score    DOUBLE,            -- NULL unless status = 'scored'
    rationale     VARCHAR,
    evidence      VARCHAR[],
    evidence_verified BOOLEAN,
    warnings      VARCHAR[],         -- soft constraint violations and other notes
    status        VARCHAR NOT NULL,  -- scored | unscored
    reason        VARCHAR            -- why unscored
);

-- One row per (corpus_id, text_id, rubric_hash, pattern_id), kept so by the counting step
-- (pattern_hits.sql) rather than by a primary key: a key's index lives in memory, and this table
-- has a row per text and pattern (7M at 1M texts x 7 patterns; #22).
CREATE TABLE IF NOT EXISTS pattern_hits (
    corpus_id   VARCHAR NOT NULL,
    text_id     VARCHAR NOT NULL,
    text_sha256 VARCHAR NOT NULL,
    rubric_hash VARCHAR NOT NULL,
    pattern_id  VARCHAR NOT NULL,
    hits        INTEGER NOT NULL
);

-- Scores given outside this warehouse's judge runs: human raters, or another judge's published
-- scores. One row per text, criterion and rater.
CREATE TABLE IF NOT EXISTS labels (
    corpus_id    VARCHAR NOT NULL,
    text_id      VARCHAR NOT NULL,
    criterion_id VARCHAR NOT NULL,
    rater        VARCHAR NOT NULL,
    score        DOUBLE NOT NULL,
    source       VARCHAR,
    PRIMARY KEY (corpus_id, text_id, criterion_id, rater)
);

-- Columns added after schema version 1 (new warehouses get them here too: one code path).
-- A text missing from its corpus's latest source is kept, marked removed, and no longer scored.
ALTER TABLE texts ADD COLUMN IF NOT EXISTS removed_at TIMESTAMP;
-- A judgment names the version of the text it judged (see text_version() in views.sql), so the
-- views keep only judgments of each text's current version; older ones stay as history.
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS text_sha256 VARCHAR;
-- Where the rubric went: the system message, or the user turn (a server that drops system messages).
ALTER TABLE completions ADD COLUMN IF NOT EXISTS prompt_layout VARCHAR;
-- Prompt tokens the provider served from its prefix cache (usage.prompt_tokens_details.cached_tokens).
ALTER TABLE completions ADD COLUMN IF NOT EXISTS cached_tokens BIGINT;
UPDATE judgments SET text_sha256 = c.text_sha256
FROM completions c WHERE judgments.text_sha256 IS NULL AND c.cell_key = judgments.cell_key;
ALTER TABLE corpora ADD COLUMN IF NOT EXISTS source_sha256 VARCHAR;  -- what the nightly ingest last loaded
ALTER TABLE runs ADD COLUMN IF NOT EXISTS estimated_usd DOUBLE;       -- the pre-run estimate
ALTER TABLE runs ADD COLUMN IF NOT EXISTS budget_usd DOUBLE;
-- The prompts' cache layout (rubric-first | text-first), why the planner chose it, and the prompt
-- tokens the run's judgments need at least: each distinct prefix once (tasks/judging/layout_plan.py).
ALTER TABLE runs ADD COLUMN IF NOT EXISTS layout VARCHAR;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS layout_reason VARCHAR;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS minimum_prompt_tokens BIGINT;

-- The prices a run was costed with (USD per million tokens); one row per model, last one wins.
CREATE TABLE IF NOT EXISTS model_prices (
    model           VARCHAR PRIMARY KEY,
    input_per_mtok  DOUBLE NOT NULL,
    output_per_mtok DOUBLE NOT NULL
);
-- Cached input (served from the provider's prefix cache) has its own rate; NULL: the input rate.
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS cached_input_per_mtok DOUBLE;
ALTER TABLE model_prices ADD COLUMN IF NOT EXISTS source VARCHAR;  -- genai-prices X.Y, a prices file, rubricflow
-- Logprob-weighted scores (G-Eval), when the endpoint returned top_logprobs at the value: the
-- probability-weighted unit score, the distribution over scale values (JSON, value -> p) and the
-- probability the alternatives put on scale values at all.
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS weighted_unit_score DOUBLE;
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS value_probs VARCHAR;
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS prob_mass DOUBLE;
-- Which engine counts a pattern's hits: re2 (in SQL), or regex (Python's backtracking engine, for
-- a pattern RE2 cannot run, such as a look-ahead).
ALTER TABLE rubric_patterns ADD COLUMN IF NOT EXISTS engine VARCHAR;

-- Every `rubricflow calibrate`: a judge (or label rater) against human raters, one row per criterion.
-- Undefined statistics (constant scores) are NULL, with the reason in `note`.
CREATE TABLE IF NOT EXISTS calibrations (
    calibrated_at    TIMESTAMP NOT NULL,
    corpus_id        VARCHAR NOT NULL,
    judge            VARCHAR NOT NULL,   -- judge:<rubric>[:weighted], or a label rater
    reference        VARCHAR NOT NULL,   -- the human raters, comma-separated
    step             DOUBLE NOT NULL,    -- category width of the kappas
    score            VARCHAR NOT NULL,   -- sampled | weighted
    rubric_hash      VARCHAR,
    judge_hash       VARCHAR,
    criterion_id     VARCHAR NOT NULL,
    n                INTEGER NOT NULL,
    pearson          DOUBLE, spearman DOUBLE, kendall_tau_b DOUBLE, cohen_kappa DOUBLE, qwk DOUBLE,
    humans           INTEGER,
    fleiss_kappa     DOUBLE,
    fleiss_texts     INTEGER,            -- Fleiss' kappa counts only the texts every human rated
    alpha_humans     DOUBLE, alpha_with_judge DOUBLE, human_pearson DOUBLE, human_qwk DOUBLE,
    note             VARCHAR
);

-- One row per night, corpus and rubric version: what the nightly job saw (see record_night.sql).
CREATE TABLE IF NOT EXISTS nights (
    night         VARCHAR NOT NULL,
    corpus_id     VARCHAR NOT NULL,
    rubric_id     VARCHAR NOT NULL,
    rubric_hash   VARCHAR NOT NULL,
    judge_hash    VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    texts         BIGINT,
    scored_texts  BIGINT,
    mean_score    DOUBLE,
    coverage      DOUBLE,
    judged_cells  BIGINT,
    failed_cells  BIGINT,
    calls         BIGINT,
    canary_corpus VARCHAR,
    canary_mean   DOUBLE,
    recorded_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (night, corpus_id, rubric_hash)
);

-- Batch API submissions: recorded before anything waits on them, so a later run collects a
-- batch an earlier run submitted instead of submitting its cells again.
CREATE TABLE IF NOT EXISTS batches (
    batch_id      VARCHAR PRIMARY KEY,
    input_file_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,     -- the run that submitted it
    corpus_id     VARCHAR NOT NULL,
    rubric_hash   VARCHAR NOT NULL,
    judge_hash    VARCHAR NOT NULL,
    cells         BIGINT NOT NULL,
    status        VARCHAR NOT NULL,     -- uploaded (batch_id: the file's id) | submitted | landed (<final status>) | lost
    online_cells  BIGINT,               -- cells judged online instead (failed lines, expired batch)
    submitted_at  TIMESTAMP NOT NULL,
    finished_at   TIMESTAMP
);

CREATE TABLE IF NOT EXISTS batch_requests (
    batch_id    VARCHAR NOT NULL,
    cell_key    VARCHAR NOT NULL,       -- the request's custom_id
    text_id     VARCHAR NOT NULL,
    text_sha256 VARCHAR NOT NULL,
    unit_id     VARCHAR NOT NULL,
    sample      INTEGER NOT NULL,
    PRIMARY KEY (batch_id, cell_key)
);

-- A rubric version's call units and their fingerprints (rubrics/render.RenderedUnit.fingerprint: the
-- prompt, the answer schema and how answers are read). A unit another version shares by
-- fingerprint was judged already: its cells are adopted, not called again (sql/adopt_cells.sql).
CREATE TABLE IF NOT EXISTS rubric_units (
    rubric_hash VARCHAR NOT NULL,
    genre_key   VARCHAR NOT NULL,       -- '' for texts of no genre the rubric names
    unit_id     VARCHAR NOT NULL,
    unit_hash   VARCHAR NOT NULL,
    PRIMARY KEY (rubric_hash, genre_key, unit_id)
);
-- An adopted cell names the cell it was copied from; it cost nothing (attempts and tokens 0).
ALTER TABLE completions ADD COLUMN IF NOT EXISTS adopted_from VARCHAR;
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS adopted_from VARCHAR;
-- Time a call waited in the client (slots, rate limits); latency_ms is send to answer only.
ALTER TABLE completions ADD COLUMN IF NOT EXISTS queue_ms DOUBLE;

-- `rubricflow improve evolve`: one row per evolution (the same command again resumes it: the id
-- hashes the corpus, starting rubric, judge, target and split) and one per round, written when the
-- reflection model's mutations are in (`proposed`) and again when the candidate is judged.
CREATE TABLE IF NOT EXISTS evolutions (
    evolution_id   VARCHAR PRIMARY KEY,
    corpus_id      VARCHAR NOT NULL,
    rubric_hash    VARCHAR NOT NULL,     -- the starting version
    judge_hash     VARCHAR NOT NULL,
    target         VARCHAR NOT NULL,     -- raters:criterion of the human labels
    seed           INTEGER NOT NULL,     -- of the train / held-out split by text
    held_out_share DOUBLE NOT NULL,      -- the validation share: rounds are accepted on those texts
    reflection_model VARCHAR,
    started_at     TIMESTAMP NOT NULL
);
-- The test texts, read once for the final version, and what changes the reflection's answers.
ALTER TABLE evolutions ADD COLUMN IF NOT EXISTS test_share DOUBLE;
ALTER TABLE evolutions ADD COLUMN IF NOT EXISTS reflection_hash VARCHAR;
ALTER TABLE evolutions ADD COLUMN IF NOT EXISTS best_hash VARCHAR;
ALTER TABLE evolutions ADD COLUMN IF NOT EXISTS validation_start DOUBLE;
ALTER TABLE evolutions ADD COLUMN IF NOT EXISTS validation_best DOUBLE;
ALTER TABLE evolutions ADD COLUMN IF NOT EXISTS test_start DOUBLE;
ALTER TABLE evolutions ADD COLUMN IF NOT EXISTS test_best DOUBLE;

CREATE TABLE IF NOT EXISTS evolution_rounds (
    evolution_id   VARCHAR NOT NULL,
    round          INTEGER NOT NULL,
    parent_hash    VARCHAR NOT NULL,     -- the best version when the round began
    criterion_id   VARCHAR,              -- the criterion that disagreed most on the training texts
    status         VARCHAR NOT NULL,     -- proposed | accepted | rejected | refused
    reason         VARCHAR,              -- why refused or rejected
    mutations      JSON,                 -- the algebra's mutation data, as the reflection model gave it
    candidate_hash VARCHAR,
    candidate      JSON,                 -- the candidate rubric's document
    metric_before  DOUBLE,               -- held-out Pearson r of the parent
    metric_after   DOUBLE,               -- held-out Pearson r of the candidate
    calls          BIGINT,               -- judge calls the candidate cost
    full_rescore_calls BIGINT,           -- what judging it from scratch would have cost
    changed_criteria INTEGER,
    total_criteria INTEGER,
    run_id         VARCHAR,              -- the candidate's scoring run
    created_at     TIMESTAMP NOT NULL,
    finished_at    TIMESTAMP,
    PRIMARY KEY (evolution_id, round)
);

-- labels: labelling plans (which texts to label, with each text's inclusion probability, so that
-- estimates from actively chosen labels stay unbiased) and the prediction-powered estimates of
-- `rubricflow estimate` (tasks/stats/estimate.py), one row per side, criterion and figure.
CREATE TABLE IF NOT EXISTS label_plans (
    plan_id        VARCHAR NOT NULL,
    corpus_id      VARCHAR NOT NULL,
    rubric_hash    VARCHAR NOT NULL,
    judge_hash     VARCHAR NOT NULL,
    mode           VARCHAR NOT NULL,     -- uniform | active
    seed           INTEGER NOT NULL,
    budget         INTEGER NOT NULL,
    text_id        VARCHAR NOT NULL,
    inclusion_prob DOUBLE NOT NULL,      -- P(the text is chosen), every text of the corpus the judge scored
    chosen         BOOLEAN NOT NULL,
    position       INTEGER,              -- the labelling order of the chosen texts
    created_at     TIMESTAMP NOT NULL,
    PRIMARY KEY (plan_id, text_id)
);
CREATE TABLE IF NOT EXISTS estimates (
    estimated_at     TIMESTAMP NOT NULL,
    corpus_id        VARCHAR NOT NULL,
    rater            VARCHAR NOT NULL,
    side             VARCHAR NOT NULL,   -- A, B, or A-B (A's error less B's)
    rubric_hash      VARCHAR NOT NULL,
    judge_hash       VARCHAR NOT NULL,
    plan_id          VARCHAR,            -- whose inclusion probabilities weighted the labels
    criterion_id     VARCHAR NOT NULL,   -- or `(overall)` (the weighted mean of the criteria, unit scale)
    figure           VARCHAR NOT NULL,   -- mean | pass_rate | error | disagreement (A/B agreement with the labels)
    confidence       DOUBLE NOT NULL,
    n_labels         INTEGER NOT NULL,
    n_texts          INTEGER NOT NULL,
    judge_only       DOUBLE,
    labels_only      DOUBLE, labels_low DOUBLE, labels_high DOUBLE,
    powered          DOUBLE NOT NULL, powered_low DOUBLE NOT NULL, powered_high DOUBLE NOT NULL,
    power_weight     DOUBLE,             -- lambda: the weight PPI++ gives the judge (0: labels alone)
    effective_labels DOUBLE              -- labels alone would need this many for the same width
);

-- seq: sequential A/Bs (`rubricflow compare --sequential`, flows/sequential.py): one row per
-- comparison, written when it stops. The text order is seeded and kept, so a continued comparison
-- walks the same texts and pays only for the cells not landed yet.
CREATE TABLE IF NOT EXISTS sequential_abs (
    ab_id         VARCHAR NOT NULL,
    corpus_id     VARCHAR NOT NULL,
    rubric_a      VARCHAR NOT NULL,     -- rubric hash of side A
    judge_a       VARCHAR NOT NULL,
    rubric_b      VARCHAR NOT NULL,
    judge_b       VARCHAR NOT NULL,
    figure        VARCHAR NOT NULL,     -- score (mean text score) | pass (pass rate)
    alpha         DOUBLE NOT NULL,
    equivalence   DOUBLE,               -- the +-margin that counts as equivalent; NULL: none asked
    seed          BIGINT NOT NULL,
    batch_size    INTEGER NOT NULL,
    text_order    JSON NOT NULL,        -- the seeded order of the corpus's texts
    decision      VARCHAR NOT NULL,     -- A | B | equivalent | undecided (corpus exhausted)
    lower         DOUBLE NOT NULL,      -- the confidence sequence for B - A when it stopped
    upper         DOUBLE NOT NULL,
    estimate      DOUBLE,               -- the mean paired difference B - A seen
    texts_judged  BIGINT NOT NULL,      -- texts of the order walked (both sides asked)
    texts_paired  BIGINT NOT NULL,      -- of those, texts with a figure on both sides
    texts_total   BIGINT NOT NULL,
    cells_judged  BIGINT NOT NULL,      -- judge calls the walked texts hold (both sides)
    rest_cells    BIGINT,               -- calls the rest of the corpus would have cost, at the same rate
    usd_judged    DOUBLE,               -- NULL: no price known for a model
    rest_usd      DOUBLE,
    looks         JSON NOT NULL,        -- [{texts, lower, upper}] after each batch
    created_at    TIMESTAMP NOT NULL
);

-- seq: judge cascades (`rubricflow score --cascade`, flows/cascade.py): the cheap judge answers
-- every text, the strong judge the calibration sample and the texts whose cheap confidence is
-- below the chosen threshold. One row per cascade, and one per text saying which level decides it.
CREATE TABLE IF NOT EXISTS cascades (
    cascade_id    VARCHAR NOT NULL,
    corpus_id     VARCHAR NOT NULL,
    rubric_hash   VARCHAR NOT NULL,
    cheap_model   VARCHAR NOT NULL,
    cheap_judge   VARCHAR NOT NULL,     -- judge hash of the cheap judge
    strong_model  VARCHAR NOT NULL,
    strong_judge  VARCHAR NOT NULL,
    agreement     DOUBLE NOT NULL,      -- the target rate kept texts agree with the strong judge at
    delta         DOUBLE NOT NULL,      -- the chance the guarantee may fail
    seed          BIGINT NOT NULL,
    threshold     DOUBLE,               -- keep the cheap answer at confidence >= this; NULL: escalate all
    calibration_texts BIGINT NOT NULL,  -- texts judged by both to choose the threshold
    calibration_kept BIGINT NOT NULL,   -- of those, kept at the threshold
    kept_disagreements BIGINT NOT NULL,
    upper_bound   DOUBLE,               -- Clopper-Pearson bound on the kept texts' disagreement rate
    created_at    TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS cascade_texts (
    cascade_id VARCHAR NOT NULL,
    text_id    VARCHAR NOT NULL,
    confidence DOUBLE,                  -- the cheap judge's: the least probability it gave its chosen values
    level      VARCHAR NOT NULL         -- cheap | strong | calibration (strong, judged to choose the threshold)
);

-- formats (#36): which rubric a routed score (`score --route FIELD`, the rubric algebra's coproduct)
-- chose for each text, by which field and value (views.sql: routed_texts, text_outcomes); one row per
-- routing, the latest one a text's current route.
CREATE TABLE IF NOT EXISTS text_routes (
    corpus_id   VARCHAR NOT NULL,
    text_id     VARCHAR NOT NULL,
    selector    VARCHAR NOT NULL,   -- the field: genre, or metadata.KEY
    value       VARCHAR,            -- the text's value of it (NULL: it has none)
    choice      VARCHAR NOT NULL,   -- the choice that took it: its value, or '*' (the default rubric)
    rubric_hash VARCHAR NOT NULL,   -- the rubric chosen
    routed_at   TIMESTAMP NOT NULL
);

-- engine: hard output constraints a cell's answer broke (rubric output.constraints, severity hard):
-- each disqualifies the text's judgment under the constraint's id (disqualifier_hits kind 'constraint').
ALTER TABLE completions ADD COLUMN IF NOT EXISTS constraint_violations VARCHAR[];

-- render: a completion names the fingerprint of the rendered call unit it was sent (rubrics/render:
-- system text, user template, answer schema, mode suffixes, re-ask notes); the cell key includes it,
-- so a wording change re-judges exactly the units whose rendering changed. NULL in warehouses made
-- before (those cells are never adopted by another version; their keys had no fingerprint).
-- A cell sent an older wording of its unit is history (current_rendering() in views.sql).
ALTER TABLE completions ADD COLUMN IF NOT EXISTS unit_hash VARCHAR;
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS unit_hash VARCHAR;
-- render: the judge's confidence in each criterion's value (0-1), when the rubric's surface asks for it.
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS confidence DOUBLE;

-- cascade: a judge cascade's human level (`score --cascade ... --human-below P`): texts the strong
-- judge decides with a confidence below P are left to a human label (cascade_texts level 'human',
-- views.sql: cascade_decisions). human_below is NULL for a cascade without that level.
ALTER TABLE cascades ADD COLUMN IF NOT EXISTS human_below DOUBLE;
ALTER TABLE cascade_texts ADD COLUMN IF NOT EXISTS strong_confidence DOUBLE;  -- the strong judge's, where it decided
-- estimate's A/B agreement figures (error, disagreement: labels only) have no powered figure; `better`
-- is the side that agrees better with the labels (A-B rows), NULL when the interval holds 0.
ALTER TABLE estimates ADD COLUMN IF NOT EXISTS better VARCHAR;
ALTER TABLE estimates ALTER COLUMN powered DROP NOT NULL;
ALTER TABLE estimates ALTER COLUMN powered_low DROP NOT NULL;
ALTER TABLE estimates ALTER COLUMN powered_high DROP NOT NULL;

-- evolve: co-evolution (`improve evolve --co-evolve`, tasks/improve/coevolve.py). Rounds take turns
-- between the target rubric (evolution_rounds) and the search's meta-components (here): the proposal
-- gate, the reflection prompt's template and the acceptance parameters. One row per meta round, written
-- when the reflection model's value is in (`proposed`) and again when decided (accepted | refused).
CREATE TABLE IF NOT EXISTS evolution_components (
    evolution_id   VARCHAR NOT NULL,
    round          INTEGER NOT NULL,
    component      VARCHAR NOT NULL,     -- gate | reflection | acceptance
    status         VARCHAR NOT NULL,     -- proposed | accepted | refused
    reason         VARCHAR,              -- why refused
    value_before   JSON NOT NULL,        -- the component in force when the round began
    value          JSON,                 -- the value proposed (NULL: the answer was unusable)
    created_at     TIMESTAMP NOT NULL,
    finished_at    TIMESTAMP,
    PRIMARY KEY (evolution_id, round)
);

-- transcripts (#51): conversations and agent traces (tasks/loaders/transcripts.py). A transcript is
-- also a text (its canonical rendering, in `texts`); its messages are columns here, one row per
-- message keyed by (corpus, transcript, position), each body stored once by its hash, so a system
-- prompt or tool schema repeated in a million transcripts is one row of message_bodies. No primary
-- keys: their indexes live in memory (40M messages at 1M transcripts); the loads keep them unique.
-- The public names are the views `messages` and `tool_calls` (views.sql).
CREATE TABLE IF NOT EXISTS message_bodies (
    body_hash VARCHAR NOT NULL,   -- MD5 of the body, hex (a content key)
    body      VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS transcript_messages (
    corpus_id     VARCHAR NOT NULL,
    transcript_id VARCHAR NOT NULL,   -- = texts.text_id
    position      INTEGER NOT NULL,   -- 0-based; the message's id is 'M' || position
    role          VARCHAR NOT NULL,   -- system | developer | user | assistant | tool | function
    body_hash     VARCHAR NOT NULL,
    name          VARCHAR,
    tool_calls    STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[],  -- arguments: JSON text
    tool_call_id  VARCHAR,            -- a tool result: the call it answers
    is_error      BOOLEAN,            -- a tool result the source marked as an error
    step_id       VARCHAR,
    span_id       VARCHAR,
    ts            VARCHAR             -- the source's timestamp, as written
);
CREATE TABLE IF NOT EXISTS transcripts (
    corpus_id     VARCHAR NOT NULL,
    transcript_id VARCHAR NOT NULL,
    tools_hash    VARCHAR,            -- the tool schemas offered, a body of message_bodies
    message_count INTEGER NOT NULL
);

-- judge succession (`rubricflow judge bridge`, tasks/stats/succession.py): each bridge between two
-- judges of a rubric version on a corpus, its verdict (per criterion and for the text score: the
-- mapping old -> new, the stitched mean and its band; the reasons when refused). `judge series`
-- restates the nights judged by the old judge on the new judge's scale through the newest
-- stitchable one.
CREATE TABLE IF NOT EXISTS judge_bridges (
    bridge_id    VARCHAR PRIMARY KEY,
    corpus_id    VARCHAR NOT NULL,
    rubric_hash  VARCHAR NOT NULL,
    old_judge    VARCHAR NOT NULL,
    new_judge    VARCHAR NOT NULL,
    bridge_texts BIGINT NOT NULL,
    stitchable   BOOLEAN NOT NULL,
    verdict      JSON NOT NULL,
    created_at   TIMESTAMP NOT NULL
);

-- The sha256 of the schema files (001_schema.sql, analytics_tables.sql, views.sql) this file was
-- last brought up to: a writer's open replays them only when they changed (warehouse/db.py).
CREATE TABLE IF NOT EXISTS schema_state (
    definition_sha VARCHAR NOT NULL
);
