-- Corpus database, version 1: documents, one row per ingestion run, one log row per file event.
-- Timestamps are UTC without time zone.
CREATE TABLE documents (
    id            VARCHAR PRIMARY KEY,
    date          DATE NOT NULL,
    source_type   VARCHAR NOT NULL,
    title         VARCHAR NOT NULL,
    summary       VARCHAR,
    url           VARCHAR,
    author        VARCHAR,
    body          VARCHAR NOT NULL,
    word_count    INTEGER NOT NULL,
    content_hash  VARCHAR NOT NULL,      -- sha256 of the file's raw bytes
    path          VARCHAR NOT NULL,      -- relative to the corpus folder, e.g. docs/doc-03.md
    file_size     BIGINT,                -- (size, mtime_ns) let a re-ingest skip re-reading a file
    file_mtime_ns BIGINT,
    unknown_fields VARCHAR[] NOT NULL,   -- extra front-matter keys, re-reported while the file is unchanged
    status        VARCHAR NOT NULL CHECK (status IN ('valid', 'removed')),
    ingested_at   TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);

CREATE TABLE ingest_runs (
    run_id      VARCHAR PRIMARY KEY,
    corpus_dir  VARCHAR NOT NULL,        -- resolved absolute path
    strict      BOOLEAN NOT NULL,
    started_at  TIMESTAMP NOT NULL,
    finished_at TIMESTAMP NOT NULL,
    added       INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    unchanged   INTEGER NOT NULL,
    removed     INTEGER NOT NULL,
    skipped     INTEGER NOT NULL,
    documents   INTEGER NOT NULL
);

-- Unchanged files are not logged one by one (their count is in ingest_runs).
CREATE TABLE ingest_log (
    run_id    VARCHAR NOT NULL,
    logged_at TIMESTAMP NOT NULL,
    path      VARCHAR,
    doc_id    VARCHAR,
    event     VARCHAR NOT NULL CHECK (event IN ('added', 'updated', 'removed', 'skipped', 'warning')),
    code      VARCHAR,
    message   VARCHAR
);
