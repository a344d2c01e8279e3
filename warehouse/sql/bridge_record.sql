-- Keep a judge-succession bridge's verdict. Params: $bridge, $corpus, $rubric, $old, $new, $texts,
-- $stitchable, $verdict (JSON text).
INSERT INTO judge_bridges VALUES ($bridge, $corpus, $rubric, $old, $new, $texts, $stitchable, $verdict::JSON, now());
