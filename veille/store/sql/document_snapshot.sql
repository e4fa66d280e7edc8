SELECT id, content_hash FROM documents WHERE status = 'valid' ORDER BY id;
