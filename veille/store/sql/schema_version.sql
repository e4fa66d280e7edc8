-- Latest applied migration (0 when none; a missing table raises CatalogException).
SELECT max(version) FROM schema_migrations;
