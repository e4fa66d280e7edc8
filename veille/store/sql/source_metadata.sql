-- Bibliographic data of the cited documents (the report's Sources section): id, date, type, title, url.
SELECT id, strftime(date, '%Y-%m-%d') AS date, source_type, title, url
FROM documents
WHERE status = 'valid' AND id IN (SELECT unnest($ids))
ORDER BY id;
