SELECT id, strftime(date, '%Y-%m-%d') AS date, source_type, title, body
FROM documents
WHERE status = 'valid' AND list_contains($ids, id);
