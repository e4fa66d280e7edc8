"""The night's key: everything the steps an unchanged night skips would read (issue 40 item 4).

A night whose key equals the last completed night's reuses that night's plan, findings, draft,
review, report and grades instead of running screen → plan → analyse → write → review → grade
(veille.run.nightskip). The skip is right only if the key covers every input of those steps, so
it is built from whole objects, never from a chosen subset of their fields:

- every document's content digest (the snapshot) and the whole catalogue the planner reads
  (entries with their derived metadata — a date read from the file's clock included —, lines,
  text fingerprints);
- the request, the reference, the writing grid as loaded, and the bytes of the corpus's format
  files (``delivery.toml``, ``sources.toml``, ``grid.toml``, ``veille.toml``);
- every setting (``Settings`` whole: backend, models, rounds, bounds, budgets…);
- every role's model key (veille.tasks.clients.model_key: model settings, code digest, backend
  version, the authority file) and the digest of the whole ``veille`` package with its data files,
  so a code or word-list edit anywhere reruns the night.

The run's date is not in the key: no step the skip replaces reads it (the period a request
follows is read from its text and the documents' dates, veille.corpus.request_period; a document
dated by its file's clock is in the catalogue; the news section and run.json, which do name the
night, are written again). What is never skipped, whatever the key, is decided by
:func:`never_skip`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from veille.fingerprint import files_digest
from veille.models.cache import fingerprint
from veille.resources import data_dir
from veille.settings import Settings

__all__ = ["KEY_FORMAT", "code_tree_digest", "format_files", "never_skip", "night_key"]

KEY_FORMAT = 1  # bumped when what the key holds changes meaning (an old night then never matches)

_PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # .../veille
# The corpus format's own files at the root besides the request (veille.corpus.layout); small.
_FORMAT_FILES = frozenset({"delivery.toml", "sources.toml", "grid.toml", "veille.toml"})


def format_files(corpus_dir: Path) -> list[Path]:
    """The corpus's format files present at its root, by name."""
    try:
        found = [
            Path(e.path) for e in os.scandir(corpus_dir) if e.name.lower() in _FORMAT_FILES and e.is_file()
        ]
    except OSError:
        return []
    return sorted(found)


def code_tree_digest(root: Path = _PACKAGE_ROOT) -> str:
    """Digest of every source and data file of the package (each file's hash kept per installed
    tree while its size and mtime are unchanged: veille.fingerprint)."""
    files = [p for p in root.rglob("*.py") if "__pycache__" not in p.parts]
    files += [p for p in data_dir().rglob("*") if p.is_file()]
    files += [p for p in root.rglob("*.sql") if "__pycache__" not in p.parts]
    return files_digest(files, root.parent)


def night_key(
    *,
    settings: Settings,
    snapshot: Sequence[tuple[str, str]],
    catalogue: Any,
    request: Any,
    reference: Any,
    grid: Any,
    role_keys: Mapping[str, str],
    code: str,
) -> str:
    """The key of tonight's skippable steps: :func:`fingerprint` of all their inputs (module
    docstring). ``catalogue``: veille.store.readers.Catalogue; ``code``: :func:`code_tree_digest`."""
    corpus_files = {p.name: p.read_bytes().hex() for p in format_files(settings.corpus_dir)}
    return fingerprint(
        {
            "format": KEY_FORMAT,
            "documents": [list(pair) for pair in snapshot],
            "catalogue": {
                "entries": list(catalogue.entries),
                "text": catalogue.text,
                "with_summaries": catalogue.with_summaries,
                "fingerprints": dict(catalogue.fingerprints),
            },
            "request": request,
            "reference": reference,
            "grid": grid,
            "corpus_files": corpus_files,
            "settings": settings.model_dump(mode="json"),
            "roles": dict(role_keys),
            "code": code,
        }
    )


def never_skip(settings: Settings, drill: Collection[str], attempt: int) -> str | None:
    """Why tonight must run every step whatever the key (None: it may skip): ``--web`` reads the
    live web; ``use_cache`` off asks for a night computed afresh; a drill's faults must fire; a
    retried flow run (attempt > 1, Prefect UI « Retry ») reruns its steps."""
    if settings.web:
        return "web"
    if not settings.use_cache:
        return "no-cache"
    if drill:
        return "drill"
    if attempt > 1:
        return "retry"
    return None
