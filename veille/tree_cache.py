"""Files derived from the installed tree, kept beside its bytecode (``veille/__pycache__``).

Some answers depend only on installed files and cost a noticeable part of a run to recompute: the
sources' hashes and imports behind the code fingerprints (veille/fingerprint.py) and the language
identifier's decompressed model (veille/language.py). Like ``.pyc`` files they live with the tree
they derive from, follow it when it changes (each records what it was made from) and are never
needed: a tree one cannot write to recomputes them in each process.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["tree_cache_dir", "write_atomically"]

_PACKAGE_ROOT = Path(__file__).resolve().parent


def tree_cache_dir(root: Path = _PACKAGE_ROOT) -> Path | None:
    """``root/__pycache__`` when it exists or can be made and is writable, else ``None``."""
    folder = root / "__pycache__"
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def write_atomically(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temporary file and a rename: a reader (another process
    starting at the same time) sees the old file or the new one, never half of one."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True
