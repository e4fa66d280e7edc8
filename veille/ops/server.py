"""Prefect server processes: their environment, a free port, start, health wait and stop.

Used by `veille serve`, the Makefile, the benchmarks and the tests; nothing runs at import time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "LOOPBACK",
    "api_url",
    "free_port",
    "prefect_command",
    "server_env",
    "start_prefect_process",
    "stop_process",
    "telemetry_off_env",
    "wait_healthy",
]

LOOPBACK = "127.0.0.1"


def telemetry_off_env() -> dict[str, str]:
    """Environment that turns Prefect telemetry and promotional content off."""
    return {
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT": "false",
    }


def api_url(port: int, host: str = LOOPBACK) -> str:
    """The REST API URL of a server listening on ``host:port``."""
    return f"http://{host}:{port}/api"


def server_env(
    *,
    port: int,
    home: Path | None = None,
    host: str = LOOPBACK,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Environment for `prefect server start`, workers and clients talking to that server.

    ``--port`` alone does not reach the UI: it would still call the API on the default port
    4200, so the UI's API URL is set explicitly, and the UI's own address (``PREFECT_UI_URL``).
    """
    env = dict(os.environ if base is None else base)
    env.update(telemetry_off_env())
    url = api_url(port, host)
    env.update(
        {
            "PREFECT_SERVER_API_HOST": host,
            "PREFECT_SERVER_API_PORT": str(port),
            "PREFECT_UI_API_URL": url,
            "PREFECT_API_URL": url,
        }
    )
    # The UI's own address: a failure notification links the flow run through it (``ui_url``); without
    # it the server knows none and the message ended « : None ». A value already set (a public
    # address behind a proxy) is kept.
    if not env.get("PREFECT_UI_URL"):
        env["PREFECT_UI_URL"] = url.removesuffix("/api")
    if home is not None:
        env["PREFECT_HOME"] = str(home)
    return env


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def prefect_command(*args: str) -> list[str]:
    """``prefect <args>`` run with this interpreter's Prefect (the project's virtualenv)."""
    return [sys.executable, "-m", "prefect", *args]


def start_prefect_process(
    args: Sequence[str], *, env: Mapping[str, str], log_path: Path, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start ``prefect <args>`` in its own process group (so it and its children can be stopped
    together), output appended to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        return subprocess.Popen(
            prefect_command(*args),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_healthy(url: str, *, timeout_s: float = 180.0, proc: subprocess.Popen[bytes] | None = None) -> float:
    """Poll ``<url>/health`` until it answers ``true``; return the seconds waited.

    Raises TimeoutError after ``timeout_s`` and RuntimeError if ``proc`` exits first.
    """
    import httpx

    start = time.monotonic()
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the Prefect server exited with code {proc.returncode} before being healthy")
        try:
            response = httpx.get(f"{url.rstrip('/')}/health", timeout=5.0)
            if response.status_code == 200 and response.json() is True:
                return time.monotonic() - start
        except (httpx.HTTPError, ValueError):
            pass
        if time.monotonic() - start > timeout_s:
            raise TimeoutError(f"{url}/health did not answer within {timeout_s:.0f} s")
        time.sleep(0.5)


def stop_process(
    proc: subprocess.Popen[bytes],
    *,
    signals: Sequence[int] = (signal.SIGTERM,),
    grace_s: float = 30.0,
) -> int:
    """Stop ``proc`` by PID with ``signals`` in turn (each followed by up to ``grace_s`` of waiting),
    then SIGKILL its whole process group so no child (flow run, uvicorn) is left behind.

    A Prefect worker needs two signals: the first asks for a graceful stop (it forwards SIGINT
    to itself), the second kills it. Returns the exit code.
    """
    for sig in signals:
        if proc.poll() is not None:
            break
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            continue
    # The group id is the PID (start_new_session=True): this also ends orphaned children.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait(timeout=grace_s)
