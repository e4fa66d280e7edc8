"""Prefect's temporary API for `veille run` without a server: started one process at a time.

Without ``PREFECT_API_URL``, every Prefect process starts its own temporary API server (a uvicorn
subprocess) on the SQLite database of ``PREFECT_HOME``. Two `veille run` started together then
start two servers at once: each needs about 10–25 s on a loaded 2-CPU machine, beyond Prefect's
20 s default wait ("Timed out while attempting to connect to ephemeral Prefect API server"), and on a
fresh ``PREFECT_HOME`` both run the database migrations concurrently (one then fails with
``table artifact has no column named ...``). :func:`start_temporary_api` starts the server before the
flow does, under a file lock in ``PREFECT_HOME`` (the second process waits until the first server
answers, then starts its own on a migrated database), and waits up to
:data:`STARTUP_TIMEOUT_S` unless ``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS`` is set.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["STARTUP_TIMEOUT_S", "start_temporary_api"]

STARTUP_TIMEOUT_S = 180
_TIMEOUT_ENV = "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"
_LOCK_NAME = ".veille-temporary-api.lock"


def start_temporary_api() -> str | None:
    """Start this process's temporary Prefect API if it will need one; returns its URL (None when a
    server is configured or ephemeral mode is off: nothing to do)."""
    from prefect.settings import PREFECT_API_URL, PREFECT_HOME, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None
    from prefect.server.api.server import SubprocessASGIServer

    timeout = int(os.environ.get(_TIMEOUT_ENV) or STARTUP_TIMEOUT_S)
    server = SubprocessASGIServer()  # the instance the client would start later (keyed on port None)
    home = Path(PREFECT_HOME.value())
    home.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, the longer wait still applies
        server.start(timeout=timeout)
        return str(server.api_url)
    with (home / _LOCK_NAME).open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            server.start(timeout=timeout)
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return str(server.api_url)
