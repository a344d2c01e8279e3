-- Every corpus the warehouse holds, by id (the demo checks a warehouse is its own before replacing it).
SELECT corpus_id
FROM corpora
ORDER BY corpus_id;
