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

__all__ = ["ENVIRONMENT_ERRNOS", "environment_error", "environment_message", "writing"]

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


# DuckDB reports the machine's errors in its own exception types, with the OS's words in the text.
_ENVIRONMENT_WORDS = (
    "No space left on device",
    "Read-only file system",
    "Permission denied",
    "Not a directory",
)


def environment_error(exc: BaseException) -> str | None:
    """One line for an error of the machine (disk full, read-only, permission, a file where a folder
    should be), found anywhere in the exception's chain; None for anything else (a bug keeps its
    traceback). The CLI prints it; the run loggers drop its frames."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in ENVIRONMENT_ERRNOS:
            return environment_message(current)
        text = str(current)
        if type(current).__module__.startswith(("duckdb", "_duckdb")) and any(
            word in text for word in _ENVIRONMENT_WORDS
        ):
            return text.strip().splitlines()[0][:300]
        current = current.__cause__ or current.__context__
    return None
