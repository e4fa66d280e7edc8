-- Bootstrap: which corpus-database migrations have been applied (see veille/store/migrations.py MIGRATIONS).
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    applied_at TIMESTAMP NOT NULL
);
