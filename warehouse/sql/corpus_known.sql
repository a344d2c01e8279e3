-- Whether a corpus id means anything here: ingested texts or imported labels. Param: $corpus.
SELECT (SELECT count(*) FROM corpora WHERE corpus_id = $corpus) + (SELECT count(*) FROM labels WHERE corpus_id = $corpus) > 0
       AS known,
       (SELECT string_agg(DISTINCT corpus_id, ', ' ORDER BY corpus_id) FROM
            (SELECT corpus_id FROM corpora UNION SELECT corpus_id FROM labels)) AS corpora;
