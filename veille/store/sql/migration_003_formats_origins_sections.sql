-- Corpus database, version 3: documents of any format (issue 29), where each derived value came from,
-- a text fingerprint for near-duplicates, sections of long documents, and the conversion cache.
ALTER TABLE documents ADD COLUMN format VARCHAR DEFAULT 'markdown';
ALTER TABLE documents ADD COLUMN id_origin VARCHAR DEFAULT 'front matter';
ALTER TABLE documents ADD COLUMN title_origin VARCHAR DEFAULT 'front matter';
ALTER TABLE documents ADD COLUMN date_origin VARCHAR DEFAULT 'front matter';
ALTER TABLE documents ADD COLUMN source_type_origin VARCHAR DEFAULT 'front matter';
ALTER TABLE documents ADD COLUMN text_hash VARCHAR;       -- sha256 of the normalised text (exact copies)
ALTER TABLE documents ADD COLUMN text_sketch UBIGINT[];   -- bottom-k hashes of its paragraphs (near copies)

-- Sections of each document's body (headings, then paragraphs), as offsets into documents.body.
CREATE TABLE sections (
    doc_id   VARCHAR NOT NULL,
    n        INTEGER NOT NULL,           -- 0, 1, ... in reading order
    heading  VARCHAR,                    -- the nearest heading above, if any
    start    INTEGER NOT NULL,           -- character offset in the body
    length   INTEGER NOT NULL,
    tokens   INTEGER NOT NULL            -- veille.tokens estimate
);

-- Converted text of non-Markdown files by content hash: an unchanged PDF is never converted again.
CREATE TABLE conversions (
    content_hash VARCHAR PRIMARY KEY,
    format       VARCHAR NOT NULL,
    text         VARCHAR NOT NULL,
    title        VARCHAR,
    date         DATE,
    author       VARCHAR,
    origins      VARCHAR NOT NULL,       -- JSON object: field -> where its value was found
    converted_at TIMESTAMP NOT NULL
);

-- The catalogue now says where a date came from when the author did not give it.
CREATE OR REPLACE VIEW catalogue AS
SELECT
    id,
    strftime(date, '%Y-%m-%d') AS date,
    source_type,
    title,
    summary,
    id || ' | ' || strftime(date, '%Y-%m-%d')
        || CASE date_origin WHEN 'file date' THEN ' (date du fichier)'
                            WHEN 'file name' THEN ' (date du nom de fichier)' ELSE '' END
        || ' | ' || source_type || ' | ' || title AS line,
    date_origin,
    text_hash,
    text_sketch
FROM documents
WHERE status = 'valid';
