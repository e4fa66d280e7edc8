"""The imports a Python source runs, read from its tokens: no compiling, no AST.

:mod:`veille.fingerprint` follows a module's ``veille`` imports to key caches on the code behind a
result. It once compiled and disassembled every module of the closure at every run (1.85 s of a
6.4 s warm run, issue 40); ``ast.parse`` is no way out either (CPython 3.11's fails when another
thread parses at the same time, and Prefect and Dask workers do). :mod:`tokenize` is plain Python,
safe across threads, and enough: ``import`` is a hard keyword that only starts an import, and
``from`` starts one only when a module name and ``import`` follow it.

What counts is what runs: imports in function and class bodies count (they run when called), those
in the body of ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``, ``if`` or ``elif``) do not
(annotations do not run), an ``else:`` branch after one does.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterator, Sequence
from token import DEDENT, INDENT, NAME, NEWLINE, OP

__all__ = ["ImportRef", "resolve", "source_imports"]

# (level, module, fromlist): ``from ..a.b import c, d`` is (2, "a.b", ("c", "d")); ``import a.b`` is
# (0, "a.b", ()). The shape of CPython's IMPORT_NAME, so resolution reads the same.
ImportRef = tuple[int, str, tuple[str, ...]]

_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
_TYPE_CHECKING_CONDITIONS = {("TYPE_CHECKING",), ("typing", ".", "TYPE_CHECKING")}


def _tokens(source: bytes) -> list[tokenize.TokenInfo]:
    return [t for t in tokenize.tokenize(io.BytesIO(source).readline) if t.type not in _SKIPPED]


def _is(tok: tokenize.TokenInfo, kind: int, text: str) -> bool:
    return tok.type == kind and tok.string == text


def _header_end(toks: Sequence[tokenize.TokenInfo], i: int) -> int:
    """Index of the ``:`` ending the compound-statement header that starts at ``toks[i]``."""
    depth = 0
    for j in range(i, len(toks)):
        s = toks[j].string if toks[j].type == OP else ""
        if s in {"(", "[", "{"}:
            depth += 1
        elif s in {")", "]", "}"}:
            depth -= 1
        elif s == ":" and depth == 0:
            return j
        elif toks[j].type == NEWLINE:
            break
    return -1


def _block_end(toks: Sequence[tokenize.TokenInfo], colon: int) -> int:
    """Index just past the body of the compound statement whose header ends at ``colon``."""
    j = colon + 1
    if j + 1 < len(toks) and toks[j].type == NEWLINE and toks[j + 1].type == INDENT:
        depth, j = 1, j + 2
        while j < len(toks) and depth:
            depth += {INDENT: 1, DEDENT: -1}.get(toks[j].type, 0)
            j += 1
        return j
    while j < len(toks) and toks[j].type != NEWLINE:  # a body on the header's line
        j += 1
    return j + 1


def _dotted(toks: Sequence[tokenize.TokenInfo], j: int) -> tuple[str, int]:
    """The dotted name starting at ``toks[j]`` (possibly empty) and the index after it."""
    parts: list[str] = []
    while j < len(toks) and toks[j].type == NAME and toks[j].string != "import":
        parts.append(toks[j].string)
        j += 1
        if j < len(toks) and _is(toks[j], OP, "."):
            j += 1
        else:
            break
    return ".".join(parts), j


def _names(toks: Sequence[tokenize.TokenInfo], j: int) -> tuple[tuple[str, ...], int]:
    """The names after ``from X import`` (``as`` aliases dropped), and the index after them."""
    names: list[str] = []
    while j < len(toks) and toks[j].type != NEWLINE and not _is(toks[j], OP, ";"):
        tok = toks[j]
        if tok.type == NAME and not (j > 0 and _is(toks[j - 1], NAME, "as")) and tok.string != "as":
            names.append(tok.string)
        elif _is(tok, OP, "*"):
            names.append("*")
        j += 1
    return tuple(names), j


def _from_import(toks: Sequence[tokenize.TokenInfo], i: int) -> tuple[ImportRef | None, int]:
    j, level = i + 1, 0
    while j < len(toks) and toks[j].type == OP and toks[j].string in {".", "..."}:
        level += len(toks[j].string)
        j += 1
    module, j = _dotted(toks, j)
    if j >= len(toks) or not _is(toks[j], NAME, "import") or not (level or module):
        return None, i + 1  # ``yield from x``, ``raise E from e``
    names, j = _names(toks, j + 1)
    return (level, module, names), j


def _plain_import(toks: Sequence[tokenize.TokenInfo], i: int) -> tuple[list[ImportRef], int]:
    found: list[ImportRef] = []
    j = i + 1
    while j < len(toks):
        module, j = _dotted(toks, j)
        if module:
            found.append((0, module, ()))
        if j < len(toks) and _is(toks[j], NAME, "as"):
            j += 2
        if j < len(toks) and _is(toks[j], OP, ","):
            j += 1
            continue
        break
    return found, j


def source_imports(source: bytes) -> Iterator[ImportRef]:
    """Every import ``source`` runs (see the module docstring), in source order.

    Raises :class:`tokenize.TokenError` or :class:`SyntaxError` (an indentation error) on a source
    that does not tokenize; a source that tokenizes but would not compile may yield imports."""
    toks = _tokens(source)
    i, at_start = 0, True
    while i < len(toks):
        tok = toks[i]
        if at_start and tok.type == NAME and tok.string in {"if", "elif"}:
            colon = _header_end(toks, i + 1)
            condition = tuple(t.string for t in toks[i + 1 : colon]) if colon > 0 else ()
            if condition in _TYPE_CHECKING_CONDITIONS:
                i, at_start = _block_end(toks, colon), True
                continue
        if _is(tok, NAME, "import"):
            found, i = _plain_import(toks, i)
            yield from found
            at_start = False
            continue
        if _is(tok, NAME, "from"):
            ref, after = _from_import(toks, i)
            if ref is not None:
                yield ref
                i, at_start = after, False
                continue
        at_start = tok.type in {NEWLINE, INDENT, DEDENT} or _is(tok, OP, ";") or _is(tok, OP, ":")
        i += 1


def resolve(ref: ImportRef, package: str) -> set[str]:
    """Absolute names ``ref`` may load from a module of ``package``: the module, and for
    ``from pkg import name`` also ``pkg.name`` (it is a submodule when such a file exists)."""
    level, module, fromlist = ref
    base = module
    if level:
        parts = package.split(".")
        parent = parts[: len(parts) - level + 1]
        base = ".".join([*parent, module] if module else parent)
    return {base, *(f"{base}.{name}" for name in fromlist if name != "*")}
