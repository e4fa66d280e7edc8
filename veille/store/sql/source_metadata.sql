-- Bibliographic data of the cited documents (the report's Sources section): id, date, type, title, url, and
-- where the date came from (veille.docdates.DATE_ORIGINS) and the title (a title from the file name names
-- no item of an inventory: veille.steps.inventory). An unknown date reads « date inconnue ».
SELECT id, COALESCE(strftime(date, '%Y-%m-%d'), 'date inconnue') AS date, source_type, title, url, date_origin,
       title_origin
FROM documents
WHERE status = 'valid' AND id IN (SELECT unnest($ids))
ORDER BY id;
