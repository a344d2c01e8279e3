-- The outcome of each trajectory check (rubrics/model.TrajectoryCheck) of a scoring run, per transcript,
-- filled by the check_*.sql queries and landed as judgments by land_checks.sql (warehouse/steps.evaluate_checks).
CREATE OR REPLACE TEMP TABLE check_results (
    criterion_id VARCHAR NOT NULL,
    text_id      VARCHAR NOT NULL,
    passed       BOOLEAN NOT NULL,
    detail       VARCHAR,          -- what was found, the judgment's rationale
    unit_score   DOUBLE            -- the criterion's binary scale's score of pass or fail
);
