"""Derived files are caches: an unreadable one is moved aside (named in an alert) and rebuilt.

The summary index, a run's Parquet files (rebuilt from its run folder), the corpus database
(rebuilt from the corpus files) and the model response cache hold nothing their sources do not. A
garbage copy must not stop every later night, and must not be deleted either (it may be wanted for a
post-mortem): it is renamed ``<name>.unreadable-<UTC stamp>`` beside itself, which no reader's glob
matches.

A log line is easy to miss, so a run turns each move into an alert (alerts table, report summary,
delivery): the flow opens :func:`collecting` around its steps, :func:`set_aside` adds what it moved to
that collection (a context variable, which Prefect copies into the threads that run tasks), and
:func:`set_aside_alerts` makes the alerts — one per reason, naming every file, where it went and why.
Outside a run (``veille ingest``, ``veille sql``) the warning log line is all there is; so is it for
a move made inside a Dask worker process.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from veille.alerts import Alert, grouped_alert

__all__ = ["UNREADABLE_SUFFIX", "SetAside", "collecting", "set_aside", "set_aside_alerts"]

logger = logging.getLogger(__name__)

UNREADABLE_SUFFIX = ".unreadable-"
ALERT_CODE = "warehouse.file_set_aside"


@dataclass(frozen=True)
class SetAside:
    """One derived file moved aside: from where, to where, why, and what happens instead."""

    path: str
    moved_to: str
    reason: str
    outcome: str


_COLLECTED: ContextVar[list[SetAside] | None] = ContextVar("veille_set_aside", default=None)


@contextmanager
def collecting() -> Iterator[list[SetAside]]:
    """Within the block (and the task threads it starts), every :func:`set_aside` is kept in the list."""
    kept: list[SetAside] = []
    token = _COLLECTED.set(kept)
    try:
        yield kept
    finally:
        _COLLECTED.reset(token)


def set_aside(path: Path, reason: str, outcome: str, *, announce: bool = True) -> Path:
    """Rename ``path`` to ``<name>.unreadable-<stamp>`` (a hidden name for Parquet files, so table globs
    skip it) and log a warning naming both; returns the new path. ``announce``: also kept for the
    run's alerts (off when the caller raises its own alert for it)."""
    path = Path(path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    hidden = "." if path.suffix == ".parquet" and not path.name.startswith(".") else ""
    target = path.with_name(f"{hidden}{path.name}{UNREADABLE_SUFFIX}{stamp}")
    os.replace(path, target)
    logger.warning("%s is unreadable (%s): moved aside to %s; %s", path, reason[:200], target, outcome)
    kept = _COLLECTED.get()
    if announce and kept is not None:
        kept.append(SetAside(str(path), str(target), reason[:200], outcome[:300]))
    return target


def set_aside_alerts(moved: Sequence[SetAside]) -> list[Alert]:
    """One ``warehouse.file_set_aside`` alert per (reason, outcome): every file, where it went, why."""
    groups: dict[tuple[str, str], list[SetAside]] = {}
    for item in moved:
        groups.setdefault((item.reason, item.outcome), []).append(item)
    return [
        grouped_alert(
            ALERT_CODE,
            stage="run",
            head=f"unreadable derived file(s) moved aside ({reason})",
            subjects=[item.path for item in items],
            items=[f"{item.path} → {item.moved_to}" for item in items],
            tail=f" ; {outcome}",
        )
        for (reason, outcome), items in groups.items()
    ]
