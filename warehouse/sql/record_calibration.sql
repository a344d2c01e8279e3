-- One criterion's agreement figures from one `rubricflow calibrate` (see tasks/stats/calibration.record).
INSERT INTO calibrations (calibrated_at, corpus_id, judge, reference, step, score, rubric_hash, judge_hash, criterion_id,
                          n, pearson, spearman, kendall_tau_b, cohen_kappa, qwk, humans, fleiss_kappa, fleiss_texts,
                          alpha_humans, alpha_with_judge, human_pearson, human_qwk, note)
VALUES (now(), $corpus_id, $judge, $reference, $step, $score, $rubric_hash, $judge_hash, $criterion_id,
        $n, $pearson, $spearman, $kendall_tau_b, $cohen_kappa, $qwk, $humans, $fleiss_kappa, $fleiss_texts,
        $alpha_humans, $alpha_with_judge, $human_pearson, $human_qwk, $note);
