-- One round of an evolution, inserted or replaced whole (a round is recorded when proposed and
-- again when judged). Params: one per column but created_at, which is kept from the first write.
INSERT OR REPLACE INTO evolution_rounds (evolution_id, round, parent_hash, criterion_id, status, reason, mutations,
    candidate_hash, candidate, metric_before, metric_after, calls, full_rescore_calls, changed_criteria,
    total_criteria, run_id, created_at, finished_at)
VALUES ($evolution, $round, $parent, $criterion, $status, $reason, $mutations, $candidate_hash, $candidate,
        $metric_before, $metric_after, $calls, $full_rescore_calls, $changed_criteria, $total_criteria, $run_id,
        coalesce((SELECT created_at FROM evolution_rounds WHERE evolution_id = $evolution AND round = $round),
                 current_timestamp),
        CASE WHEN $status = 'proposed' THEN NULL ELSE current_timestamp END);
