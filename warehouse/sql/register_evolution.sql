-- An evolution, once (running the same command again resumes it). Params: one per column.
INSERT OR IGNORE INTO evolutions (evolution_id, corpus_id, rubric_hash, judge_hash, target, seed, held_out_share,
                                  reflection_model, started_at)
VALUES ($evolution, $corpus, $rubric, $judge, $target, $seed, $share, $reflection_model, current_timestamp);
