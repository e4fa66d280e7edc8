"""Digests of the code and data that produce a result, for cache keys that follow the code.

A cached plan, branch or answer is valid only for the code that made it. Instead of version
constants bumped by hand, keys carry :func:`code_digest`: a SHA-256 over the source of some modules
and of every ``veille`` module they import (statically, transitively), plus data files. Edit any
of them and the digest changes; edit an unrelated module and it does not. Computed once per process
for a given set of modules and files (files are read, not stat-ed: a copy keeps its digest).
"""

from __future__ import annotations

import dis
import hashlib
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from types import CodeType

__all__ = ["code_digest", "files_digest", "import_closure", "text_digest"]

_PACKAGE_ROOT = Path(__file__).resolve().parent  # .../veille
_TOP = _PACKAGE_ROOT.name


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


def _jump_target(instructions: list[dis.Instruction], i: int) -> int | None:
    """Offset the ``if`` at ``instructions[i]`` (a load of ``TYPE_CHECKING``) jumps to when false."""
    for ins in instructions[i + 1 : i + 3]:  # 3.13 puts a TO_BOOL between the load and the jump
        if "JUMP" in ins.opname and "IF_FALSE" in ins.opname:
            return int(ins.argval)
        if ins.opname != "TO_BOOL":
            return None
    return None


def _code_imports(code: CodeType) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(level, module, fromlist) of every import ``code`` runs, nested functions and classes
    included, except those under ``if TYPE_CHECKING:`` (annotations do not run)."""
    instructions = list(dis.get_instructions(code))
    skip_until = -1
    for i, ins in enumerate(instructions):
        if ins.offset < skip_until:
            continue
        if ins.argval == "TYPE_CHECKING" and ins.opname in {"LOAD_NAME", "LOAD_GLOBAL", "LOAD_ATTR"}:
            skip_until = _jump_target(instructions, i) or -1
        elif ins.opname == "IMPORT_NAME" and i >= 2:
            level, fromlist = instructions[i - 2].argval, instructions[i - 1].argval
            yield int(level or 0), str(ins.argval), tuple(fromlist or ())
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _code_imports(const)


def _imports(path: Path, name: str) -> set[str]:
    """``veille.*`` modules ``path`` imports when it runs (not under ``if TYPE_CHECKING:``).

    Read from the bytecode, not from ``ast.parse``: CPython 3.11's ast.parse fails ("AST constructor
    recursion depth mismatch") when another thread parses at the same time, and Prefect and Dask
    workers do; compiling to bytecode builds no Python AST objects."""
    code = compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for level, module, fromlist in _code_imports(code):
        base = module
        if level:
            parts = package.split(".")
            parent = parts[: len(parts) - level + 1]
            base = ".".join([*parent, module] if module else parent)
        found.add(base)
        found.update(f"{base}.{a}" for a in fromlist if a != "*")  # ``from pkg import module``
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
