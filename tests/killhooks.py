"""Crash-test observer: ``VEILLE_TEST_KILL_AT=<stage>[#n]`` SIGKILLs the process at a checkpoint,
``VEILLE_TEST_PAUSE_AT=<stage>:<seconds>`` sleeps there (to make two runs overlap in a test).

The crash-and-resume tests (tests/test_crash_resume.py) need to kill ``veille run`` at a precise
point of a fast run: a random delay alone misses the short stages. Production code only marks its
stage boundaries (:func:`veille.checkpoints.checkpoint`, a no-op without an observer); this module,
installed by the test-only entry point (tests/veille_entry.py) or by the crash tests' zygote
(tests/crashkit.py), is the observer: when the variable names that stage, the process kills itself
with SIGKILL (no cleanup, no ``finally``, exactly like the OOM killer or a power cut), at the
``n``-th time the boundary is reached (default: the first). Stages: veille.checkpoints.STAGES.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

from veille.checkpoints import observe

__all__ = ["KILL_ENV", "PAUSE_ENV", "install", "kill_or_pause"]

KILL_ENV = "VEILLE_TEST_KILL_AT"
PAUSE_ENV = "VEILLE_TEST_PAUSE_AT"

_counts: dict[str, int] = {}
_lock = threading.Lock()


def kill_or_pause(stage: str) -> None:
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


def install() -> Callable[[], None]:
    """Observe every checkpoint of this process with :func:`kill_or_pause`."""
    return observe(kill_or_pause)
