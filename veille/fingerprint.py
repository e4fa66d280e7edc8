"""Digests of the code and data that produce a result, for cache keys that follow the code.

A cached plan, branch or answer is valid only for the code that made it. Instead of version
constants bumped by hand, keys carry :func:`code_digest`: a SHA-256 over the source of some modules
and of every ``veille`` module they import (statically, transitively), plus data files. Edit any
of them and the digest changes; edit an unrelated module and it does not.

What it costs (issue 40): each file's SHA-256 and imports are read once per installed tree, not per
run. They are kept in ``veille/__pycache__/fingerprints.json`` (veille/tree_cache.py) and reused
while the file's size and modification time are unchanged, the rule CPython applies to its own
``.pyc`` files; a file modified in the last two seconds is never recorded, so an edit within one
tick of a coarse clock is read again next time (git's « racily clean » entries). Imports are read
from tokens (veille/source_imports.py), never by compiling. The digest itself is of the files'
bytes: a copy of the tree keeps its digests.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import tokenize
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from veille.source_imports import ImportRef, resolve, source_imports
from veille.tree_cache import tree_cache_dir, write_atomically

__all__ = ["code_digest", "files_digest", "import_closure", "index_saved", "real_files_digest", "text_digest"]

_PACKAGE_ROOT = Path(__file__).resolve().parent  # .../veille
_TOP = _PACKAGE_ROOT.name
_CACHE_NAME = "fingerprints.json"
_FORMAT = 1  # bumped when an entry's meaning changes (the file is then ignored, not misread)
_RACY_NS = 2_000_000_000  # see the module docstring


def text_digest(*parts: str) -> str:
    """SHA-256 (hex, 24 chars) of the parts, each length-prefixed so no two splits collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        h.update(f"{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()[:24]


def _imports_of(data: bytes) -> list[ImportRef]:
    try:
        return list(source_imports(data))
    except (tokenize.TokenError, SyntaxError):
        return []  # a module that cannot run imports nothing; its bytes still enter the digest


class _FileIndex:
    """SHA-256 and imports of files by absolute path, reused while size and mtime are unchanged;
    saved to ``cache_file`` when given (one JSON object, replaced atomically)."""

    def __init__(self, cache_file: Path | None) -> None:
        self._file = cache_file
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = self._load()
        self._dirty = False

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._file is None:
            return {}
        try:
            data = json.loads(self._file.read_bytes())
        except (OSError, ValueError):
            return {}  # absent or damaged: derived state, rebuilt
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            return {}
        entries = data.get("files")
        return (
            {str(k): v for k, v in entries.items() if isinstance(v, dict)}
            if isinstance(entries, dict)
            else {}
        )

    def entry(self, path: Path, with_imports: bool) -> dict[str, Any]:
        key = str(path)
        before = path.stat()
        with self._lock:
            known = self._entries.get(key)
        if (
            known is not None
            and known.get("size") == before.st_size
            and known.get("mtime_ns") == before.st_mtime_ns
            and (not with_imports or "imports" in known)
        ):
            return known
        data = path.read_bytes()
        entry: dict[str, Any] = {
            "size": before.st_size,
            "mtime_ns": before.st_mtime_ns,
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        if with_imports:
            entry["imports"] = [[level, module, list(names)] for level, module, names in _imports_of(data)]
        after = path.stat()
        # Recorded only when nothing moved while it was read and the mtime is old enough to trust.
        unchanged = len(data) == before.st_size == after.st_size and after.st_mtime_ns == before.st_mtime_ns
        if unchanged and time.time_ns() - before.st_mtime_ns > _RACY_NS:
            with self._lock:
                self._entries[key] = entry
                self._dirty = True
        return entry

    def sha256(self, path: Path) -> str:
        return str(self.entry(path, with_imports=False)["sha256"])

    def imports(self, path: Path) -> list[ImportRef]:
        raw = self.entry(path, with_imports=True)["imports"]
        return [(int(level), str(module), tuple(map(str, names))) for level, module, names in raw]

    def save(self) -> None:
        with self._lock:
            if self._file is None or not self._dirty:
                return
            self._dirty = False
            files = dict(self._entries)
        payload = json.dumps({"format": _FORMAT, "files": files}, sort_keys=True).encode()
        write_atomically(self._file, payload)


@cache
def _index(root: Path) -> _FileIndex:
    folder = tree_cache_dir(root)
    return _FileIndex(folder / _CACHE_NAME if folder is not None else None)


def index_saved(root: Path = _PACKAGE_ROOT) -> bool:
    """Whether the tree's file index is on disk (a night has computed fingerprints in this tree)."""
    folder = tree_cache_dir(root)
    return folder is not None and (folder / _CACHE_NAME).is_file()


_MEMORY = _FileIndex(None)  # files outside a package folder (a user's authority file): one process


@lru_cache(maxsize=4096)  # the closures of the nine roles share most names (and many are attributes)
def _module_file(name: str, root: Path) -> Path | None:
    rel = Path(*name.split(".")[1:])
    for candidate in (root / rel / "__init__.py", root.joinpath(rel).with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _imports(index: _FileIndex, path: Path, name: str) -> set[str]:
    """``veille.*`` modules ``path`` imports when it runs (veille/source_imports.py)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for ref in index.imports(path):
        found |= resolve(ref, package)
    return {m for m in found if m == _TOP or m.startswith(_TOP + ".")}


def import_closure(modules: Iterable[str], root: Path = _PACKAGE_ROOT) -> list[Path]:
    """Source files of ``modules`` and of every module of the package they import, transitively
    (a package's ``__init__`` included). Names that are not modules (imported attributes) drop out."""
    root = root.resolve()
    index = _index(root)
    seen: dict[str, Path] = {}
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name, root)
        if path is None:
            continue
        seen[name] = path
        todo.extend(_imports(index, path, name))
    index.save()
    return sorted(set(seen.values()))


def files_digest(paths: Iterable[Path], root: Path | None = None) -> str:
    """Digest of the files' contents, each named by its path relative to ``root`` (sorted)."""
    return real_files_digest({p.resolve() for p in paths}, root.resolve() if root is not None else None)


def real_files_digest(paths: Iterable[Path], base: Path | None) -> str:
    """:func:`files_digest` of paths already resolved (absolute, no symbolic link on the way), relative
    to ``base``, resolved too: not resolved again (a system call per component of every path)."""
    parts: list[str] = []
    used: set[_FileIndex] = set()
    # Paths compared as strings, not through pathlib (a parse per relative_to, five per file): equal
    # for resolved POSIX paths, which are absolute and normalised; sorted by their parts, as Path sorts.
    prefix = None if base is None else str(base).rstrip(os.sep) + os.sep
    for path in sorted(set(paths), key=lambda p: str(p).split(os.sep)):
        text = str(path)
        inside = prefix is not None and text.startswith(prefix)
        label = text[len(prefix) :] if prefix is not None and inside else path.name
        package, nested, _ = label.partition(os.sep) if inside else ("", "", "")
        # The index of the package folder holding the file (``base/<package>/...``), where its entry is
        # saved with the package's bytecode; files elsewhere are hashed once per process.
        index = _index(base / package) if base is not None and nested else _MEMORY
        parts += [label, index.sha256(path)]
        used.add(index)
    for index in used:
        index.save()
    return text_digest(*parts)


@lru_cache(maxsize=64)
def code_digest(modules: tuple[str, ...], data_files: tuple[Path, ...] = ()) -> str:
    """Digest of ``modules`` with their import closure and ``data_files`` (missing files count as
    absent: a configuration file one may delete). Cached per process."""
    files = [*import_closure(modules), *(p for p in data_files if p.is_file())]
    return files_digest(files, _PACKAGE_ROOT.parent)
