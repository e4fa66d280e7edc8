"""Opening the corpus database when another process holds it: wait with backoff, do not fail.

DuckDB lets one process write a database file, and no other process read it meanwhile: a second
process gets ``IO Error: Could not set lock on file ...``. Two ``veille run`` on the same warehouse
(a late nightly and a manual run) meet exactly there: one ingests while the other ingests or reads.
Every hold is short (an ingestion is one transaction of about a second on the bundled corpus, a read
is milliseconds), so waiting is the right answer: the open is retried with exponential backoff and
jitter for up to :data:`LOCK_WAIT_S`, and only then does a :class:`DatabaseBusyError` reach the user,
naming the file and what holds it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import duckdb

__all__ = ["LOCK_WAIT_S", "DatabaseBusyError", "is_lock_conflict", "retry_on_lock"]

T = TypeVar("T")

# Longest wait for another process's hold on the file. An ingestion of 100k documents takes well
# under a minute (docs/benchmarks.md, "Ingestion"); five minutes leaves a wide margin.
LOCK_WAIT_S = 300.0
_FIRST_DELAY_S = 0.02
_MAX_DELAY_S = 1.0


class DatabaseBusyError(RuntimeError):
    """The corpus database stayed locked by another process for longer than the wait allows."""

    retryable = False  # the task-level retry would wait again for the same holder


def is_lock_conflict(exc: BaseException) -> bool:
    """True for DuckDB's "another process holds this file" error."""
    text = str(exc)
    return isinstance(exc, duckdb.IOException) and (
        "Could not set lock" in text or "Conflicting lock" in text
    )


def retry_on_lock(
    action: Callable[[], T],
    db_path: Path | str,
    *,
    wait_s: float = LOCK_WAIT_S,
    rng: random.Random | None = None,
) -> T:
    """Run ``action`` (which opens ``db_path``), retrying while another process holds the file."""
    jitter = rng or random.Random()
    deadline = time.monotonic() + wait_s
    delay = _FIRST_DELAY_S
    while True:
        try:
            return action()
        except duckdb.IOException as exc:
            if not is_lock_conflict(exc):
                raise
            left = deadline - time.monotonic()
            if left <= 0:
                raise DatabaseBusyError(
                    f"{db_path} : la base du corpus est encore verrouillée par un autre processus après "
                    f"{wait_s:.0f} s ({exc}) ; attendu : que l'autre exécution de veille ou ingestion se termine"
                ) from None
            # Jitter: two waiting processes must not retry in lockstep.
            time.sleep(min(left, delay * (0.5 + jitter.random())))
            delay = min(delay * 2, _MAX_DELAY_S)
