-- Valid documents dated after $today (a typo such as 2062 for 2026 would make them the most recent source).
SELECT id, path, date FROM documents WHERE status = 'valid' AND date > $today ORDER BY id;
