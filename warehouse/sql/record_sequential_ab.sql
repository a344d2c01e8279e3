-- Keep a sequential A/B as it stopped. Params: one per column of sequential_abs but created_at.
INSERT INTO sequential_abs VALUES (
    $ab_id, $corpus, $rubric_a, $judge_a, $rubric_b, $judge_b, $figure, $alpha, $equivalence, $seed, $batch_size,
    $text_order, $decision, $lower, $upper, $estimate, $texts_judged, $texts_paired, $texts_total, $cells_judged,
    $rest_cells, $usd_judged, $rest_usd, $looks, current_timestamp);
