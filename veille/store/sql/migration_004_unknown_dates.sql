-- Corpus database, version 4 (issue 36): a document's date comes from the document (front matter, its
-- format's own metadata when it is the document's, a Jekyll file-name prefix, the first publication date of
-- its text) or is unknown (NULL, « date inconnue »); the file clock only when the user opts in
-- (VEILLE_DATE_FROM_FILE_CLOCK). date_origin is one of front_matter | format_metadata | file_name | text |
-- file_clock | unknown (veille.docdates.DATE_ORIGINS).
ALTER TABLE documents ALTER COLUMN date DROP NOT NULL;
ALTER TABLE documents ALTER COLUMN date_origin SET DEFAULT 'front_matter';
UPDATE documents SET date_origin = CASE date_origin
    WHEN 'front matter' THEN 'front_matter'
    WHEN 'file name' THEN 'file_name'
    WHEN 'file date' THEN 'file_clock'
    ELSE 'format_metadata' END;

-- Dates the previous rules derived (a file's clock, a template's properties) are derived again: the next
-- ingestion re-reads those files (no size: the stat shortcut misses), and converts PDF/DOCX/HTML again (the
-- conversion cache kept the properties' date without asking whether it was the document's).
UPDATE documents SET file_size = NULL WHERE date_origin <> 'front_matter';
DELETE FROM conversions;

-- The catalogue says « date inconnue » for an unknown date, and where a date not given by the author came from.
CREATE OR REPLACE VIEW catalogue AS
SELECT
    id,
    COALESCE(strftime(date, '%Y-%m-%d'), 'date inconnue') AS date,
    source_type,
    title,
    summary,
    id || ' | ' || COALESCE(strftime(date, '%Y-%m-%d'), 'date inconnue')
        || CASE date_origin WHEN 'file_clock' THEN ' (date du fichier)'
                            WHEN 'file_name' THEN ' (date du nom de fichier)'
                            WHEN 'text' THEN ' (date lue dans le texte)' ELSE '' END
        || ' | ' || source_type || ' | ' || title AS line,
    date_origin,
    text_hash,
    text_sketch
FROM documents
WHERE status = 'valid';
