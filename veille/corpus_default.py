"""Which folder a bare `veille run` reads (issue 39: a user's folder works as they guess it)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["default_corpus"]


def default_corpus(home: Path, checkout: Path) -> Path:
    """`corpus/` of ``home`` (veille.settings.default_home), except for an installed veille run
    inside a user's folder: no `corpus/` there and a request file (request.md, demande.md…) at
    ``home``, the working directory, make that directory the corpus, as the user guessed. In a
    checkout (``home == checkout``) it is always the bundled `corpus/`."""
    bundled = home / "corpus"
    if home == checkout or bundled.is_dir():
        return bundled
    from veille.corpus.layout import find_request_files  # only then: the corpus reader is heavier

    return home if find_request_files(home) else bundled
