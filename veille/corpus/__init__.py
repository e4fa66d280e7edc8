"""Corpus format: parsing and validation of documents, ``request.md`` and ``reference/``.

A corpus is a folder with ``request.md``, ``docs/*.md`` (one document per file, YAML front matter
between ``---`` lines, then a non-empty Markdown body) and an optional ``reference/`` folder
(``dossier.md`` + ``facts.yaml``). The format and every error message are described in
docs/corpus-format.md.

Modules: ``errors`` (CorpusError, StrictModeError), ``frontmatter`` (reading files, the YAML loader,
front-matter fields), ``document``, ``dates`` (a document's date from its text and which format
properties are its own), ``request``, ``reference`` and ``terms`` (the request's key terms).
Every validation failure raises :class:`~veille.corpus.errors.CorpusError`, whose message names the
file, the field (when there is one) and what was expected. Nothing here touches the database: see
``veille.store``.
"""

__all__: list[str] = []
