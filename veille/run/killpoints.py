"""Crash test hooks: ``VEILLE_TEST_KILL_AT=<stage>[#n]`` SIGKILLs the process at a stage boundary,
``VEILLE_TEST_PAUSE_AT=<stage>:<seconds>`` sleeps there (to make two runs overlap in a test).

The crash-and-resume tests (tests/test_crash_resume.py) need to kill ``veille run`` at a precise
point of a fast run: a random delay alone misses the short stages. Each stage boundary calls
:func:`kill_point`; when the variable names that stage, the process kills itself with SIGKILL
(no cleanup, no ``finally``, exactly like the OOM killer or a power cut), at the ``n``-th time the
boundary is reached (default: the first). Without the variables this is two environment lookups.

Stages: ``ingest`` (rows written, transaction not committed), ``analyse`` (a branch computed, its
result not yet persisted), ``review`` (a critic round evaluated), ``outputs`` (run folder written
but run.json), ``record`` (after each Parquet table file; the 9th is the ``runs`` commit marker).
"""

from __future__ import annotations

import os
import signal
import threading
import time

__all__ = ["KILL_ENV", "PAUSE_ENV", "STAGES", "kill_point"]

KILL_ENV = "VEILLE_TEST_KILL_AT"
PAUSE_ENV = "VEILLE_TEST_PAUSE_AT"
STAGES: tuple[str, ...] = ("ingest", "analyse", "review", "outputs", "record")

_counts: dict[str, int] = {}
_lock = threading.Lock()


def kill_point(stage: str) -> None:
    """SIGKILL this process if ``VEILLE_TEST_KILL_AT`` is ``stage`` or ``stage#n`` and this is the n-th call;
    sleep if ``VEILLE_TEST_PAUSE_AT`` is ``stage:<seconds>``."""
    pause = os.environ.get(PAUSE_ENV)
    if pause and pause.partition(":")[0] == stage:
        time.sleep(float(pause.partition(":")[2] or 1))
    target = os.environ.get(KILL_ENV)
    if not target:
        return
    name, _, nth = target.partition("#")
    if name != stage:
        return
    with _lock:
        _counts[stage] = _counts.get(stage, 0) + 1
        reached = _counts[stage] >= int(nth or 1)
    if reached:
        os.kill(os.getpid(), signal.SIGKILL)
