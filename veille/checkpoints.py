"""Named points of a run where an observer may look in: a no-op unless one is registered.

Production code marks a few stage boundaries with :func:`checkpoint` (``ingest``: rows written,
transaction not committed; ``analyse``: a branch computed, its result not yet persisted;
``review``: a critic round evaluated; ``outputs``: run folder written but run.json; ``record``:
after each Parquet table file, the 9th being the ``runs`` commit marker). Nothing here reads the
environment or knows what an observer does: the crash tests register one that SIGKILLs the process
at a chosen point (tests/killhooks.py, installed by the test-only entry point tests/veille_entry.py).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["STAGES", "Observer", "checkpoint", "observe"]

STAGES: tuple[str, ...] = ("ingest", "analyse", "review", "outputs", "record")

Observer = Callable[[str], None]

_observers: list[Observer] = []


def checkpoint(stage: str) -> None:
    """Tell every registered observer that ``stage`` was reached (none registered: nothing)."""
    for observer in tuple(_observers):
        observer(stage)


def observe(observer: Observer) -> Callable[[], None]:
    """Register ``observer`` for every checkpoint of this process; returns its unregistration."""
    _observers.append(observer)

    def remove() -> None:
        if observer in _observers:
            _observers.remove(observer)

    return remove
