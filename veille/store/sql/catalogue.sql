SELECT id, date, source_type, title, summary, line FROM catalogue ORDER BY id;
