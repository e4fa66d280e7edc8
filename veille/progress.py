"""How far a long step is, for whoever shows it: a no-op unless an observer is registered.

Steps report ``(stage, done, total)`` at their own pace (ingestion per file, analysis per finished
branch, review per critic round); nothing here prints, reads the environment or knows what an observer
does. ``veille run`` registers one that draws rich progress bars on a terminal (veille/cli/progress.py);
a deployed run registers none. Shape of veille/checkpoints.py: observers of this process only (a
branch analysed in another process, Dask's, reports nothing).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["STAGES", "Observer", "Progress", "advance", "counting", "report", "watch"]

# Stages that report, and the words an observer shows for them (French, like the run's summary).
STAGES: dict[str, str] = {"ingest": "Ingestion", "analyse": "Analyse", "review": "Relecture"}


@dataclass(frozen=True)
class Progress:
    stage: str  # a key of STAGES
    done: int
    total: int | None  # None: not known yet
    note: str = ""  # what is being done now (« écriture »), or empty


Observer = Callable[[Progress], None]
T = TypeVar("T")

_observers: list[Observer] = []
_lock = threading.Lock()  # branches finish in several threads
_counts: dict[str, tuple[int, int | None]] = {}


def report(stage: str, done: int, total: int | None, note: str = "") -> None:
    """``stage`` has done ``done`` of ``total`` units; tell every observer (none: nothing)."""
    if not _observers:
        return
    with _lock:
        _counts[stage] = (done, total)
    _tell(Progress(stage, done, total, note))


def advance(stage: str, note: str = "") -> None:
    """One more unit of ``stage`` done (its total as last reported)."""
    if not _observers:
        return
    with _lock:
        done, total = _counts.get(stage, (0, None))
        _counts[stage] = (done + 1, total)
    _tell(Progress(stage, done + 1, total, note))


def counting(stage: str, items: Sequence[T], start: int, total: int, last: str = "écriture") -> Iterator[T]:
    """``items`` (a batch starting at unit ``start`` of ``total``), each reported once handled; the
    batch's last one with the note ``last`` (what follows the batch: its writing)."""
    for done, item in enumerate(items, start + 1):
        yield item
        report(stage, done, total, last if done == start + len(items) else "")


def _tell(event: Progress) -> None:
    for observer in tuple(_observers):
        observer(event)


def watch(observer: Observer) -> Callable[[], None]:
    """Register ``observer`` for every report of this process; returns its unregistration."""
    _observers.append(observer)

    def remove() -> None:
        if observer in _observers:
            _observers.remove(observer)
        if not _observers:
            with _lock:
                _counts.clear()

    return remove
