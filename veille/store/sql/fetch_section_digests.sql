-- The section digests of the given versions ($ids and $hashes: parallel lists).
SELECT d.doc_id, d.content_hash, d.digests
FROM section_digests AS d
JOIN (SELECT unnest($ids) AS doc_id, unnest($hashes) AS content_hash) AS w
  ON d.doc_id = w.doc_id AND d.content_hash = w.content_hash;
