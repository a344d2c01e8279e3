-- The viewer's panel page: where a panel of judges (one rubric version, several judge setups) agrees
-- least, per criterion and text, largest spread first. Params: $corpus, $rubric, $limit.
SELECT text_id, criterion_id, judges, mean, spread, majority, majority_share
FROM panel_scores
WHERE corpus_id = $corpus AND rubric_hash = $rubric
ORDER BY spread DESC, text_id, criterion_id
LIMIT $limit;
