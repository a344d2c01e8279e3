-- Keep a cascade and which level decides each text. Params: the cascades columns but created_at,
-- and $texts, $confidences, $strong_confidences, $levels (lists of one length).
INSERT INTO cascades (cascade_id, corpus_id, rubric_hash, cheap_model, cheap_judge, strong_model, strong_judge,
                      agreement, delta, seed, threshold, calibration_texts, calibration_kept, kept_disagreements,
                      upper_bound, created_at, human_below)
VALUES ($cascade_id, $corpus, $rubric, $cheap_model, $cheap_judge, $strong_model, $strong_judge, $agreement, $delta,
        $seed, $threshold, $calibration_texts, $calibration_kept, $kept_disagreements, $upper_bound, current_timestamp,
        $human_below);
INSERT INTO cascade_texts (cascade_id, text_id, confidence, level, strong_confidence)
SELECT $cascade_id, unnest($texts::VARCHAR[]), unnest($confidences::DOUBLE[]), unnest($levels::VARCHAR[]),
       unnest($strong_confidences::DOUBLE[]);
