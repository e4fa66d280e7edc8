"""The corpus database (DuckDB): schema, incremental ingestion, the catalogue, document fetches.

Modules: ``migrations`` (the one ordered registry of schema migrations), ``connection`` (read-only
and read-write connections at the current schema), ``lock`` (waiting for another process's hold on
the file), ``files`` (the corpus's files before ingestion), ``ingest`` (``ingest_corpus``, one
transaction), ``rows`` (the Arrow layouts it writes), ``readers`` (catalogue, documents, snapshot,
source metadata) and ``queries`` (the SQL files in ``sql/``, package data).
"""

__all__: list[str] = []
