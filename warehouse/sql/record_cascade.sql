-- Keep a cascade and which level decides each text. Params: the cascades columns but created_at,
-- and $texts, $confidences, $levels (lists of one length).
INSERT INTO cascades VALUES (
    $cascade_id, $corpus, $rubric, $cheap_model, $cheap_judge, $strong_model, $strong_judge, $agreement, $delta,
    $seed, $threshold, $calibration_texts, $calibration_kept, $kept_disagreements, $upper_bound, current_timestamp);
INSERT INTO cascade_texts
SELECT $cascade_id, unnest($texts::VARCHAR[]), unnest($confidences::DOUBLE[]), unnest($levels::VARCHAR[]);
