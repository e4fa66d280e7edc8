"""Fixtures that start a real Prefect server and workers on loopback, and always stop them.

The server runs `prefect server start --host 127.0.0.1 --port <free>` with a temporary
PREFECT_HOME and analytics off; workers run `prefect worker start --type process`. Both are
started in their own process group and stopped by PID in finalizers (the worker with two
signals, as it needs), then their process groups are killed so nothing is left running.
Timeouts are generous and every wait polls: CI is a loaded 2-core machine.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from veille.ops.server import (
    LOOPBACK,
    api_url,
    free_port,
    prefect_command,
    server_env,
    start_prefect_process,
    stop_process,
    wait_healthy,
)
from veille.ops.setup import DEFAULT_POOL

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_S = 240.0
RUN_TIMEOUT_S = 300.0


@dataclass
class PrefectServer:
    port: int
    home: Path
    env: dict[str, str]
    proc: subprocess.Popen[bytes]
    log_path: Path
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def api_url(self) -> str:
        return api_url(self.port)

    @property
    def ui_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/"

    def client(self) -> Any:
        from prefect.client.orchestration import SyncPrefectClient

        # An explicit URL: the test process may also hold the session's ephemeral harness.
        return SyncPrefectClient(api=self.api_url)

    def cli(self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 300) -> str:
        """Run `prefect <args>` against this server from the project root; fail with its output."""
        result = subprocess.run(
            prefect_command(*args),
            env=dict(env or self.env),
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        if result.returncode != 0:
            raise AssertionError(
                f"prefect {' '.join(args)} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
            )
        return result.stdout

    def wait_final(self, flow_run_id: Any, *, timeout_s: float = RUN_TIMEOUT_S) -> Any:
        """Poll a flow run until it reaches a final state; return the flow run."""
        deadline = time.monotonic() + timeout_s
        with self.client() as client:
            while True:
                run = client.read_flow_run(flow_run_id)
                if run.state is not None and run.state.is_final():
                    return run
                if time.monotonic() > deadline:
                    state = run.state.name if run.state else None
                    raise AssertionError(f"flow run {flow_run_id} still {state} after {timeout_s:.0f} s")
                time.sleep(1.0)

    def log_tail(self, path: Path | None = None, chars: int = 4000) -> str:
        target = path or self.log_path
        return target.read_text(errors="replace")[-chars:] if target.exists() else ""


def _server_env(home: Path, port: int) -> dict[str, str]:
    env = server_env(port=port, home=home)
    env["PREFECT_LOCAL_STORAGE_PATH"] = str(home / "storage")
    # Poll often so runs start promptly; heartbeats off keeps the loaded CI machine quiet.
    env["PREFECT_WORKER_QUERY_SECONDS"] = "2"
    env["PREFECT_WORKER_PREFETCH_SECONDS"] = "5"
    env["PREFECT_LOGGING_LEVEL"] = "INFO"
    return env


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    base = tmp_path_factory.mktemp("prefect-server")
    home = base / "home"
    home.mkdir()
    port = free_port()
    env = _server_env(home, port)
    log_path = base / "server.log"
    proc = start_prefect_process(
        ["server", "start", "--host", LOOPBACK, "--port", str(port), "--analytics-off"],
        env=env,
        log_path=log_path,
    )
    server = PrefectServer(port=port, home=home, env=env, proc=proc, log_path=log_path)
    try:
        try:
            wait_healthy(server.api_url, timeout_s=SERVER_START_TIMEOUT_S, proc=proc)
        except (TimeoutError, RuntimeError) as exc:
            raise AssertionError(f"{exc}\n--- server log ---\n{server.log_tail()}") from exc
        yield server
    finally:
        # Workers first (they talk to the server), then the server, each by PID.
        for worker in server.workers:
            stop_process(worker, signals=(15, 15), grace_s=30)
        stop_process(proc, grace_s=30)


@pytest.fixture()
def start_worker(
    prefect_server: PrefectServer, tmp_path: Path
) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Factory: start a process worker on ``pool`` with extra environment; stopped at teardown."""
    started: list[subprocess.Popen[bytes]] = []

    def start(
        pool: str = DEFAULT_POOL, extra_env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        env = dict(prefect_server.env)
        env.update(extra_env or {})
        log_path = tmp_path / f"worker-{len(started)}.log"
        proc = start_prefect_process(
            ["worker", "start", "--pool", pool, "--type", "process"],
            env=env,
            log_path=log_path,
            cwd=PROJECT_ROOT,
        )
        started.append(proc)
        prefect_server.workers.append(proc)
        return proc

    yield start
    for proc in started:
        # A busy worker needs two signals: graceful stop, then kill.
        code = stop_process(proc, signals=(15, 15), grace_s=30)
        assert proc.poll() is not None, f"worker {proc.pid} still running (code {code})"
        prefect_server.workers.remove(proc)
