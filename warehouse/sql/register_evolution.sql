-- An evolution, once (running the same command again resumes it). Params: one per column.
INSERT OR IGNORE INTO evolutions (evolution_id, corpus_id, rubric_hash, judge_hash, target, seed, held_out_share,
                                  test_share, reflection_model, reflection_hash, started_at)
VALUES ($evolution, $corpus, $rubric, $judge, $target, $seed, $share, $test_share, $reflection_model,
        $reflection_hash, current_timestamp);
