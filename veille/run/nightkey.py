"""The night's key: everything the steps an unchanged night skips would read (issue 40 item 4).

A night whose key equals the last completed night's reuses that night's plan, findings, draft,
review, report and grades instead of running screen → plan → analyse → write → review → grade
(veille.run.nightskip). The skip is right only if the key covers every input of those steps, so
it is built from whole objects, never from a chosen subset of their fields:

- every document's content digest (the snapshot) and the whole catalogue the planner reads
  (entries with their derived metadata — a date read from the file's clock included —, lines,
  text fingerprints);
- the request, the reference, the writing grid as loaded, the bytes of the corpus's format files
  (``delivery.toml``, ``sources.toml``, ``grid.toml``, ``veille.toml``) and of every file of the
  configuration folder (``settings.config_dir``: grid, prices, the authority file), which may lie
  outside the package;
- every setting (``Settings`` whole: backend, each role's provider and model settings, rounds,
  bounds, budgets…);
- the version of each backend the roles use (veille.backends.backend_version: the offline engine's
  digest, its authority file included) and the digest of the whole ``veille`` package with its data
  and SQL files, so a code or word-list edit anywhere reruns the night. Together they hold what
  every role's model key (veille.tasks.clients.model_key) is made of, without computing each
  role's import closure on a night that asks no role.

The run's date is not in the key: no step the skip replaces reads it (the period a request
follows is read from its text and the documents' dates, veille.corpus.request_period; a document
dated by its file's clock is in the catalogue; the news section and run.json, which do name the
night, are written again). What is never skipped, whatever the key, is decided by
:func:`never_skip`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from veille.fingerprint import real_files_digest
from veille.models.cache import fingerprint
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
    """Digest of every file of the package but its caches (each file's hash kept per installed
    tree while its size and mtime are unchanged: veille.fingerprint). Every file, not a chosen set
    of kinds: a kind left out (a template, a file a later change adds) would be an input a night
    could skip past unseen."""
    return real_files_digest(_tree_files(root.resolve()), root.resolve().parent)


def _tree_files(root: Path) -> list[Path]:
    """The resolved paths of ``root.rglob("*")``'s files outside ``__pycache__`` folders, listed with
    ``os.walk`` (which, like rglob, does not enter linked folders): only a linked file is resolved,
    every other path under the resolved root already is (resolving each was half the key's time)."""
    if "__pycache__" in root.parts:
        return []
    found: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        for name in names:
            path = Path(folder, name)
            if path.is_symlink():
                if path.is_file():  # a link to a file: its target, as resolve() gives it
                    found.append(path.resolve())
            elif path.is_file():
                found.append(path)
    return found


def _folder_digest(folder: Path) -> str:
    """SHA-256 of every file under ``folder`` with its relative path (a few small files). Hashed
    here, not through veille.fingerprint's per-package index, which would write its own cache file
    inside a folder of data files."""
    if not folder.is_dir():
        return ""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(
            f"{path.relative_to(folder)}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\0".encode()
        )
    return digest.hexdigest()


def night_key(
    *,
    settings: Settings,
    snapshot: Sequence[tuple[str, str]],
    catalogue: Any,
    request: Any,
    reference: Any,
    grid: Any,
    backends: Mapping[str, str],
    code: str,
) -> str:
    """The key of tonight's skippable steps: :func:`fingerprint` of all their inputs (module
    docstring). ``catalogue``: veille.store.readers.Catalogue; ``backends``: provider -> version of
    the providers the roles use; ``code``: :func:`code_tree_digest`."""
    corpus_files = {p.name: p.read_bytes().hex() for p in format_files(settings.corpus_dir)}
    config_files = _folder_digest(settings.config_dir)
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
            "config_files": config_files,
            "settings": settings.model_dump(mode="json"),
            "backends": dict(backends),
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
