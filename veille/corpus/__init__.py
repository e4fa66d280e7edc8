"""Corpus format: parsing and validation of documents, the request and ``reference/``.

A corpus is a folder with a request (``request.md`` or ``demande.md``, front matter optional), its
documents under ``docs/`` or, without one there, at its root (``layout``: where each is found) and an
optional ``reference/`` folder (``dossier.md`` + ``facts.yaml``). The format and every error message are described in
docs/corpus-format.md.

Modules: ``errors`` (CorpusError, StrictModeError), ``frontmatter`` (reading files, the YAML loader,
front-matter fields), ``document``, ``dates`` (a document's date from its text and which format
properties are its own), ``request``, ``reference`` and ``terms`` (the request's key terms).
Every validation failure raises :class:`~veille.corpus.errors.CorpusError`, whose message names the
file, the field (when there is one) and what was expected. Nothing here touches the database: see
``veille.store``.
"""

__all__: list[str] = []
