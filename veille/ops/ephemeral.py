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

No orphans: Prefect stops its temporary server at exit (``atexit``), which a SIGKILL, the OOM killer
or a crash of the interpreter skip; the server then listened on 127.0.0.1 for good. On Linux the
server is started with a parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in the child,
between fork and exec), so the kernel kills it when the process that started it dies, whatever the
way. Elsewhere Prefect's own start is used (atexit only).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["STARTUP_TIMEOUT_S", "dies_with_parent", "start_temporary_api"]

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

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
    preexec = dies_with_parent()
    if preexec is not None and not server.running:
        server._run_uvicorn_command = lambda: _run_uvicorn(server, preexec)  # type: ignore[method-assign]
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


def dies_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` giving the child SIGKILL when this process dies (None off Linux).

    libc and its ``prctl`` are looked up here, in the parent: between fork and exec the child only
    calls them (no import, no allocation worth a lock). The parent may die before ``prctl`` runs:
    then the child is already reparented, sees it and exits. The signal fires when the *thread*
    that forked dies, so start the server from a thread that lives as long as the process (the
    CLI's main thread does)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    prctl = libc.prctl
    parent = os.getpid()
    kill = int(signal.SIGKILL)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def _run_uvicorn(server: Any, preexec: Callable[[], None]) -> subprocess.Popen[Any]:
    """Prefect 3.9's ``SubprocessASGIServer._run_uvicorn_command`` (same command and environment:
    ``tests/test_ephemeral_orphans.py`` compares them) plus the parent-death signal."""
    from prefect.settings import get_current_settings

    server_env = {"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
    return subprocess.Popen(
        args=uvicorn_args(server.port),
        env={
            **os.environ,
            **server_env,
            **get_current_settings().to_environment_variables(exclude_unset=True),
        },
        preexec_fn=preexec,  # prctl only, see dies_with_parent
    )


def uvicorn_args(port: int) -> list[str]:
    """The temporary server's command line, as Prefect builds it. Prefect's folder is found without
    importing it (``prefect.__module_path__``, ~1.8 s): the shared API's keeper stays small."""
    import importlib.util

    spec = importlib.util.find_spec("prefect")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("prefect is not installed in this environment")
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "--app-dir",
        str(Path(next(iter(spec.submodule_search_locations))).parent),
        "--factory",
        "prefect.server.api.server:create_app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "error",
        "--lifespan",
        "on",
    ]
