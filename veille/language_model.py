"""py3langid's model, restricted to veille's languages, decompressed once per installed tree.

py3langid ships its model as an LZMA-compressed ``.npz`` (4.5 MB, 68 MB once decompressed) and
decompresses it at every load: about 0.6 s of CPU in each process that reads a language, a tenth of
a warm night (issue 40, docs/benchmarks.md). Restricted to the handful of languages veille
identifies, the model's arrays hold 21 MB, which load uncompressed in a few hundredths of a second.
They are written once, beside the package's bytecode (veille/tree_cache.py), under a name that
records what they were made from: py3langid's version, its model file's size and modification time
and the languages kept. Anything else (no cache folder, an unreadable or foreign file) loads
py3langid's own model as before, so the cache can only save time, never change an answer: the
identifier built from it holds the same arrays (tests/test_language_model.py).
"""

from __future__ import annotations

import hashlib
from array import array
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from veille.tree_cache import tree_cache_dir, write_atomically

__all__ = ["identifier_saved", "load_identifier"]

_PREFIX = "langid-"
_TYPECODES = {1: "B", 2: "H", 4: "I", 8: "Q"}  # unsigned arrays by item size, as py3langid builds them


def _model_file() -> Path:
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    return Path(MODEL_DIR) / MODEL_FILE


def _cache_name(languages: list[str]) -> str:
    stat = _model_file().stat()
    try:
        release = version("py3langid")
    except PackageNotFoundError:
        release = "?"
    made_from = f"{release}|{stat.st_size}|{stat.st_mtime_ns}|{','.join(languages)}"
    return f"{_PREFIX}{hashlib.sha256(made_from.encode()).hexdigest()[:16]}.npz"


def _unsigned(values: Any) -> array[int]:
    data = np.ascontiguousarray(values)
    out: array[int] = array(_TYPECODES[data.dtype.itemsize])
    out.frombytes(data.tobytes())
    return out


def _build(languages: list[str]) -> Any:
    from py3langid.langid import LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(_model_file(), norm_probs=True)
    identifier.set_languages(languages)
    return identifier


def _save(identifier: Any, path: Path) -> None:
    import io

    buffer = io.BytesIO()
    np.savez(
        buffer,
        ptc=np.ascontiguousarray(identifier.nb_ptc),
        pc=np.asarray(identifier.nb_pc),
        classes=np.array(identifier.nb_classes),
        nextmove=np.asarray(identifier.tk_nextmove),
        row=np.asarray(identifier.tk_row),
        output=np.asarray(identifier.tk_output, dtype=np.int32),
    )
    if write_atomically(path, buffer.getvalue()):
        for stale in path.parent.glob(f"{_PREFIX}*.npz"):
            if stale != path:
                stale.unlink(missing_ok=True)


def _load(path: Path) -> Any:
    from py3langid.langid import LanguageIdentifier

    with np.load(path, allow_pickle=False) as data:
        return LanguageIdentifier(
            data["ptc"],
            data["pc"],
            [str(c) for c in data["classes"].tolist()],
            _unsigned(data["nextmove"]),
            data["output"].tolist(),
            norm_probs=True,
            tk_row=_unsigned(data["row"]),
        )


def identifier_saved(languages: list[str], cache_dir: Path | None = None) -> bool:
    """Whether the identifier for ``languages`` is already decompressed in the tree's cache."""
    folder = cache_dir if cache_dir is not None else tree_cache_dir()
    return folder is not None and (folder / _cache_name(languages)).is_file()


def load_identifier(languages: list[str], cache_dir: Path | None = None) -> Any:
    """A py3langid identifier (probabilities normalised) restricted to ``languages``; read from the
    tree's cache when present (``cache_dir``, by default ``veille/__pycache__``), written there
    otherwise."""
    folder = cache_dir if cache_dir is not None else tree_cache_dir()
    if folder is None:
        return _build(languages)
    path = folder / _cache_name(languages)
    if path.is_file():
        try:
            identifier = _load(path)
        except (OSError, ValueError, KeyError):
            identifier = None  # damaged: rebuilt and rewritten below
        if identifier is not None and set(identifier.nb_classes) == set(languages):
            return identifier
    identifier = _build(languages)
    _save(identifier, path)
    return identifier
