"""Write errors that name the path and the operation.

``[Errno 28] No space left on device`` alone does not say which disk or which file: a write that
fails deep in a library (Parquet, JSON, SQLite) loses the path. :func:`writing` re-raises such an
error as the same ``OSError`` subclass (``OSError(errno, …)`` picks it) with the operation and the
path, e.g. ``[Errno 28] No space left on device (writing a Parquet file): '/w/data/runs/…'``.
"""

from __future__ import annotations

import contextlib
import errno as errnos
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ENVIRONMENT_ERRNOS", "environment_message", "writing"]

# Errors of the machine, not of the input: the CLI prints them as one line (exit 1), no traceback.
# EEXIST: ``mkdir(parents=True, exist_ok=True)`` under a path where a file stands.
ENVIRONMENT_ERRNOS = frozenset(
    {
        errnos.ENOSPC,
        errnos.EDQUOT,
        errnos.EROFS,
        errnos.EACCES,
        errnos.EPERM,
        errnos.ENOTDIR,
        errnos.EISDIR,
        errnos.EEXIST,
    }
)


@contextlib.contextmanager
def writing(path: Path | str, operation: str) -> Iterator[None]:
    """Within the block, an ``OSError`` without a file name gets ``path`` and ``operation``."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None and exc.errno is not None:
            raise  # already names its file
        code = exc.errno if exc.errno is not None else errnos.EIO
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise OSError(code, f"{reason} ({operation})", str(path)) from exc


def environment_message(exc: OSError) -> str:
    """One line: the reason, the operation when known, and the path."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"{reason}: {exc.filename}" if exc.filename else reason
