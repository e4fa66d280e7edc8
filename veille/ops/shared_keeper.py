"""The shared Prefect API's keeper: its own detached process (``python -m veille.ops.shared_keeper``).

It starts Prefect's temporary server command (veille.ops.ephemeral.uvicorn_args) as its child, with
a parent-death signal, publishes its URL in the state file once it answers, then polls the lease
file: once no `veille run` has held it for ``idle_s`` seconds it keeps the lease exclusively (no
client starts using the server meanwhile), removes the state file and stops the server. The client
side is veille/ops/shared_api.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from veille.ops.checkout import current_identity
from veille.ops.shared_api import (
    LEASE_NAME,
    STARTING_NAME,
    STATE_NAME,
    SharedApiError,
    SharedApiState,
    healthy,
    prefect_version,
    read_state,
)

__all__ = ["keep", "main"]

_POLL_S = 1.0
_PORT_ATTEMPTS = 3  # a port picked free can be taken before uvicorn binds it


def _server_env() -> dict[str, str]:
    from veille.ops.server import telemetry_off_env

    # What Prefect gives its temporary server: no UI, ephemeral services (no scheduler).
    env = {**os.environ, **telemetry_off_env()}
    env.update({"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"})
    env.pop("PREFECT_API_URL", None)
    return env


def _start_server(home: Path) -> tuple[subprocess.Popen[bytes], int]:
    from veille.ops.ephemeral import STARTUP_TIMEOUT_S, dies_with_parent, uvicorn_args
    from veille.ops.server import free_port

    preexec = dies_with_parent()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    for _ in range(_PORT_ATTEMPTS):
        port = free_port()
        process = subprocess.Popen(uvicorn_args(port), env=_server_env(), preexec_fn=preexec, cwd=home)
        url = f"http://127.0.0.1:{port}/api"
        while process.poll() is None and time.monotonic() < deadline:
            if healthy(url, timeout_s=1.0):
                return process, port
            time.sleep(0.1)
        if process.poll() is None:  # timed out: give up
            process.kill()
            break
    raise SharedApiError(f"the Prefect server did not start (home {home})")


def _write_state(home: Path, state: SharedApiState) -> None:
    tmp = home / f".{STATE_NAME}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(state.__dict__, indent=1), encoding="utf-8")
    os.replace(tmp, home / STATE_NAME)


def keep(home: Path, idle_s: float) -> int:
    """The keeper's life: start the server, publish it, stop both after ``idle_s`` without a lease."""
    import fcntl
    from datetime import UTC, datetime

    stopping = False

    def on_term(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    (home / STARTING_NAME).write_text(str(os.getpid()), encoding="utf-8")
    me = current_identity()  # the code this keeper runs, imported here: what clients compare
    try:
        process, port = _start_server(home)
        state = SharedApiState(
            url=f"http://127.0.0.1:{port}/api",
            port=port,
            keeper_pid=os.getpid(),
            server_pid=process.pid,
            prefect_version=prefect_version(),
            idle_s=idle_s,
            started_utc=datetime.now(UTC).isoformat(timespec="seconds"),
            checkout=me.checkout,
            environment=me.environment,
        )
        _write_state(home, state)
    finally:
        with contextlib.suppress(OSError):
            (home / STARTING_NAME).unlink()
    print(f"{state.started_utc} shared Prefect API on {state.url} (pid {process.pid})", flush=True)
    last_busy = time.monotonic()
    why = "asked to stop"
    with (home / LEASE_NAME).open("a", encoding="utf-8") as lease:
        while True:
            if process.poll() is not None:
                why = f"the server exited with code {process.returncode}"
                break
            try:
                fcntl.flock(lease.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                last_busy = time.monotonic()  # a client holds the lease
                if stopping:
                    break  # `veille server --stop`: stop even under a client (it was asked)
            else:
                if stopping or time.monotonic() - last_busy >= idle_s:
                    why = why if stopping else f"no run for {idle_s:.0f} s"
                    break  # keep the exclusive lock: no client starts using us while we stop
                fcntl.flock(lease.fileno(), fcntl.LOCK_UN)
            time.sleep(_POLL_S)
        if read_state(home) == state:
            with contextlib.suppress(OSError):
                (home / STATE_NAME).unlink()
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    print(f"{datetime.now(UTC).isoformat(timespec='seconds')} stopped: {why}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m veille.ops.shared_keeper")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--idle", type=float, required=True)
    args = parser.parse_args(argv)
    return keep(args.home, args.idle)


if __name__ == "__main__":
    sys.exit(main())
