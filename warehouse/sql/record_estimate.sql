-- One figure of one `rubricflow estimate` (see tasks/stats/estimate.record).
INSERT INTO estimates (estimated_at, corpus_id, rater, side, rubric_hash, judge_hash, plan_id, criterion_id, figure,
                       confidence, n_labels, n_texts, judge_only, labels_only, labels_low, labels_high,
                       powered, powered_low, powered_high, power_weight, effective_labels, better)
VALUES (now(), $corpus_id, $rater, $side, $rubric_hash, $judge_hash, $plan_id, $criterion_id, $figure,
        $confidence, $n_labels, $n_texts, $judge_only, $labels_only, $labels_low, $labels_high,
        $powered, $powered_low, $powered_high, $power_weight, $effective_labels, $better);
