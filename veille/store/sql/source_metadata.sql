-- Bibliographic data of the cited documents (the report's Sources section): id, date, type, title, url, and
-- where the date came from (veille.docdates.DATE_ORIGINS). An unknown date reads « date inconnue ».
SELECT id, COALESCE(strftime(date, '%Y-%m-%d'), 'date inconnue') AS date, source_type, title, url, date_origin
FROM documents
WHERE status = 'valid' AND id IN (SELECT unnest($ids))
ORDER BY id;
