-- Corpus database, version 6: the digest of each section of every version of a document (issue 40).
-- Kept when the document is replaced, so the night after an edit knows which sections changed since
-- the version the previous dossier read (its content hash is in that run's document snapshot) and
-- re-reads only those (veille/steps/edited_sections.py).
CREATE TABLE section_digests (
    doc_id       VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,       -- documents.content_hash of that version
    digests      VARCHAR[] NOT NULL,     -- veille.corpus.sections.section_digests, reading order
    PRIMARY KEY (doc_id, content_hash)
);
