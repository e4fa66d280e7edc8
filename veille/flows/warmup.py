"""A first night's one-off work done while `veille run` waits for its Prefect API (issue 40 item 6).

On a fresh tree the first run waits for the shared Prefect server to start and migrate its database
(docs/benchmarks.md, « Set-up »: 44 of the run's 80 s at load 24), and the client is idle meanwhile.
Two caches every night needs are built then, in a thread, instead of inside the flow: the code
fingerprints' file index behind every role's cache key (veille/fingerprint.py, ~0.5 s of CPU when
absent) and the language identifier (veille/language_model.py, its model decompressed and written
once per tree). Both are also kept per process, so the flow finds them ready and a warm night does
this work once, as before; nothing here changes a key or an answer. Best effort: a failure is left
to the flow, which does the same work and reports it there.

Only a cache missing from the tree is built: once both are on disk, the per-process work (each
role's import closure walked, 0.16 s of CPU; the model read, 0.13 s) is left to the steps that use
it, so an unchanged night, which asks no role and reads no language (veille.run.nightskip), does
not pay for it.
"""

from __future__ import annotations

import logging
import threading

from veille.fingerprint import index_saved
from veille.language import load_model, model_saved
from veille.settings import Settings
from veille.tasks.clients import role_keys

__all__ = ["start_warming"]

logger = logging.getLogger(__name__)


def _warm(settings: Settings) -> None:
    try:
        if not index_saved():
            role_keys(settings)
        if not model_saved():
            load_model()
    except Exception as exc:  # the flow computes the same and fails there, with its own report
        logger.debug("warm-up before the run skipped: %s: %s", type(exc).__name__, exc)


def start_warming(settings: Settings) -> threading.Thread:
    """Build the night's per-tree caches in a daemon thread; join it once the API is there, before
    the flow starts, so the flow never computes them at the same time."""
    thread = threading.Thread(target=_warm, args=(settings,), name="veille-warm-up", daemon=True)
    thread.start()
    return thread
