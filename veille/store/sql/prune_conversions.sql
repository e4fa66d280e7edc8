-- Conversions of contents no valid document holds any more (deleted or edited files).
DELETE FROM conversions
WHERE content_hash NOT IN (SELECT content_hash FROM documents WHERE status = 'valid');
