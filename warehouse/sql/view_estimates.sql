-- The viewer's estimate page: the newest `rubricflow estimate` (or `compare --human`) figures of a
-- corpus, one row per rater, side, rubric version, judge, criterion and figure, with the rubric's
-- id and version. Params: $corpus.
SELECT e.rater, e.side, r.rubric_id, r.version, e.judge_hash, e.plan_id, e.criterion_id, e.figure,
       e.confidence, e.n_labels, e.n_texts, e.judge_only, e.labels_only, e.labels_low, e.labels_high,
       e.powered, e.powered_low, e.powered_high, e.effective_labels, e.better, e.estimated_at
FROM estimates e LEFT JOIN rubrics r USING (rubric_hash)
WHERE e.corpus_id = $corpus
QUALIFY row_number() OVER (PARTITION BY e.rater, e.side, e.rubric_hash, e.judge_hash, e.criterion_id, e.figure
                           ORDER BY e.estimated_at DESC) = 1
ORDER BY e.rater, r.rubric_id, e.judge_hash, e.side, e.criterion_id = '(overall)', e.criterion_id, e.figure;
