SELECT id, date, source_type, title, summary, line, text_hash, text_sketch FROM catalogue ORDER BY id;
