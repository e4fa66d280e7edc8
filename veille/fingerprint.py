"""Digests of the code and data that produce a result, for cache keys that follow the code.

A cached plan, branch or answer is valid only for the code that made it. Instead of version
constants bumped by hand, keys carry :func:`code_digest`: a SHA-256 over the source of some modules
and of every ``veille`` module they import (statically, transitively), plus data files. Edit any
of them and the digest changes; edit an unrelated module and it does not. Computed once per process
for a given set of modules and files (files are read, not stat-ed: a copy keeps its digest).
"""

from __future__ import annotations

import ast
import hashlib
import threading
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

__all__ = ["code_digest", "files_digest", "import_closure", "text_digest"]

_PACKAGE_ROOT = Path(__file__).resolve().parent  # .../veille
_TOP = _PACKAGE_ROOT.name


_PARSE_LOCK = threading.Lock()


def text_digest(*parts: str) -> str:
    """SHA-256 (hex, 24 chars) of the parts, each length-prefixed so no two splits collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        h.update(f"{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()[:24]


def _module_file(name: str, root: Path) -> Path | None:
    rel = Path(*name.split(".")[1:])
    for candidate in (root / rel / "__init__.py", root.joinpath(rel).with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:`` (annotations do not run)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if _type_checking(node):
            todo.extend(getattr(node, "orelse", []))
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _imports(path: Path, name: str) -> set[str]:
    """``veille.*`` modules ``path`` imports when it runs (not under ``if TYPE_CHECKING:``)."""
    with _PARSE_LOCK:  # CPython 3.11's ast.parse is not safe from several threads at once (Dask workers)
        tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _nodes(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # ``from pkg import module``
    return {m for m in found if m == _TOP or m.startswith(_TOP + ".")}


def import_closure(modules: Iterable[str], root: Path = _PACKAGE_ROOT) -> list[Path]:
    """Source files of ``modules`` and of every module of the package they import, transitively
    (a package's ``__init__`` included). Names that are not modules (imported attributes) drop out."""
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
        todo.extend(_imports(path, name))
    return sorted(set(seen.values()))


def files_digest(paths: Iterable[Path], root: Path | None = None) -> str:
    """Digest of the files' contents, each named by its path relative to ``root`` (sorted)."""
    parts: list[str] = []
    for path in sorted(set(paths)):
        label = str(path.relative_to(root)) if root is not None and path.is_relative_to(root) else path.name
        parts += [label, hashlib.sha256(path.read_bytes()).hexdigest()]
    return text_digest(*parts)


@lru_cache(maxsize=64)
def code_digest(modules: tuple[str, ...], data_files: tuple[Path, ...] = ()) -> str:
    """Digest of ``modules`` with their import closure and ``data_files`` (missing files count as
    absent: a configuration file one may delete). Cached per process."""
    files = [*import_closure(modules), *(p for p in data_files if p.is_file())]
    return files_digest(files, _PACKAGE_ROOT.parent)
