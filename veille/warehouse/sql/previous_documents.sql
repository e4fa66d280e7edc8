-- The document snapshot of one run: id and content hash. Parameter: $run_id.
SELECT doc_id, content_hash FROM documents WHERE run_id = $run_id ORDER BY doc_id;
