-- The patterns that hit most texts of a run's corpus under its rubric. Param: $run.
SELECT p.pattern_id, p.texts_hit, p.total_hits, p.hit_rate
FROM pattern_summary p JOIN runs r ON r.corpus_id = p.corpus_id AND r.rubric_hash = p.rubric_hash
WHERE r.run_id = $run AND p.texts_hit > 0
ORDER BY p.texts_hit DESC LIMIT 8;
