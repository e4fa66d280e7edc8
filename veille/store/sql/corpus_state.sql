-- What the previous ingestion left: used to classify files as added / updated / unchanged / removed.
SELECT id, path, content_hash, file_size, file_mtime_ns, unknown_fields, status, ingested_at FROM documents;
