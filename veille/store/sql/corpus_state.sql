-- What the previous ingestion left: used to classify files as added / updated / unchanged / removed.
-- Rows written before migration 003 (no text fingerprint, no sections) read as changed: re-read once.
SELECT
    id,
    path,
    CASE WHEN text_hash IS NULL THEN '' ELSE content_hash END AS content_hash,
    CASE WHEN text_hash IS NULL THEN NULL ELSE file_size END AS file_size,
    file_mtime_ns,
    unknown_fields,
    status,
    ingested_at,
    date_origin
FROM documents;
