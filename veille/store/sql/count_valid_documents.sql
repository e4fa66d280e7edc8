SELECT count(*) FROM documents WHERE status = 'valid';
