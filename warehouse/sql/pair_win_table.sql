-- Win rates per system for one rubric version on a corpus. Params: $corpus, $rubric.
SELECT left(judge_hash, 8) AS judge, criterion_id, system, comparisons, win_rate
FROM pair_win_rates WHERE corpus_id = $corpus AND rubric_hash = $rubric
ORDER BY judge, criterion_id, win_rate DESC;
