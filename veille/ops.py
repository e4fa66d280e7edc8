"""Operating veille with Prefect: pure helpers used by the CLI, the Makefile, the flow and the tests.

Nothing here runs at import time and no Prefect client is built before a function is called.
The optional Dask extra is only imported when the Dask task runner is selected.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast

from prefect.task_runners import ThreadPoolTaskRunner

from veille.settings import Settings

if TYPE_CHECKING:
    from prefect.client.orchestration import SyncPrefectClient
    from prefect.futures import PrefectFuture
    from prefect.schedules import Schedule
    from prefect.task_runners import TaskRunner

__all__ = [
    "DEFAULT_POOL",
    "LOOPBACK",
    "MODEL_CALL_LIMIT",
    "NIGHTLY_CRON",
    "NIGHTLY_TIMEZONE",
    "CleanTarget",
    "SettingsTaskRunner",
    "amodel_call_slot",
    "api_url",
    "build_task_runner",
    "clean",
    "clean_targets",
    "ensure_model_call_limit",
    "ensure_work_pool",
    "free_port",
    "model_call_slot",
    "nightly_schedule",
    "prefect_command",
    "server_env",
    "settings_task_runner",
    "start_prefect_process",
    "stop_process",
    "telemetry_off_env",
    "wait_healthy",
]

LOOPBACK = "127.0.0.1"
DEFAULT_POOL = "veille-process"
# Name of the Prefect global concurrency limit shared by every model call of every run.
MODEL_CALL_LIMIT = "veille-model-calls"
NIGHTLY_CRON = "0 2 * * *"
NIGHTLY_TIMEZONE = "Europe/Paris"

# How long a "does the limit exist on this server?" answer is trusted, so a long-lived
# `veille serve` picks up a limit created after it started without one lookup per call.
_LIMIT_LOOKUP_TTL_S = 60.0


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
    4200, so the UI's API URL is set explicitly.
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


# --- server-side objects -------------------------------------------------------------------


def ensure_work_pool(client: SyncPrefectClient, name: str = DEFAULT_POOL) -> bool:
    """Create the ``process`` work pool ``name`` unless it exists. Returns True if created."""
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

    try:
        pool = client.read_work_pool(name)
    except ObjectNotFound:
        client.create_work_pool(
            WorkPoolCreate(
                name=name,
                type="process",
                base_job_template=ProcessWorker.get_default_base_job_template(),
            )
        )
        return True
    if pool.type != "process":
        raise ValueError(f"work pool {name!r} exists with type {pool.type!r}; expected 'process'")
    return False


def ensure_model_call_limit(client: SyncPrefectClient, limit: int, name: str = MODEL_CALL_LIMIT) -> bool:
    """Create (or resize) the global concurrency limit on model calls. Returns True if created."""
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
    from prefect.exceptions import ObjectNotFound

    if limit < 1:
        raise ValueError(f"model call limit must be >= 1, got {limit}")
    try:
        existing = client.read_global_concurrency_limit_by_name(name)
    except ObjectNotFound:
        client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=limit))
        return True
    if existing.limit != limit or not existing.active:
        client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=limit, active=True))
    return False


# --- model-call slot -------------------------------------------------------------------------

_limit_cache: dict[tuple[str, str], tuple[float, bool]] = {}
_limit_cache_lock = threading.Lock()


def _configured_api_url() -> str | None:
    from prefect.settings import get_current_settings

    return get_current_settings().api.url


def _cached_lookup(url: str, name: str) -> bool | None:
    with _limit_cache_lock:
        cached = _limit_cache.get((url, name))
    if cached is not None and time.monotonic() - cached[0] < _LIMIT_LOOKUP_TTL_S:
        return cached[1]
    return None


def _remember(url: str, name: str, exists: bool) -> bool:
    with _limit_cache_lock:
        _limit_cache[(url, name)] = (time.monotonic(), exists)
    return exists


def _limit_exists(url: str, name: str) -> bool:
    cached = _cached_lookup(url, name)
    if cached is not None:
        return cached
    from prefect.client.orchestration import get_client

    try:
        with get_client(sync_client=True) as client:
            exists = bool(client.read_global_concurrency_limit_by_name(name).active)
    except Exception:
        # Missing limit (ObjectNotFound) or unreachable API: model calls go on under the local cap.
        exists = False
    return _remember(url, name, exists)


async def _alimit_exists(url: str, name: str) -> bool:
    cached = _cached_lookup(url, name)
    if cached is not None:
        return cached
    from prefect.client.orchestration import get_client

    try:
        async with get_client() as client:
            exists = bool((await client.read_global_concurrency_limit_by_name(name)).active)
    except Exception:
        exists = False
    return _remember(url, name, exists)


@contextmanager
def model_call_slot(settings: Settings, name: str = MODEL_CALL_LIMIT) -> Iterator[None]:
    """Hold one slot of the Prefect global concurrency limit ``name`` around one model call.

    Applies only when a Prefect API is configured (a server, not an ephemeral run) *and* the
    limit exists on it (``make deploy`` creates it). Otherwise it is a no-op and only the model
    layer's local cap (``settings.max_concurrent_calls``) bounds concurrency. The slot is
    leased, so a crashed process frees it when the lease expires. For code running on an
    event loop use :func:`amodel_call_slot`: this one blocks its thread while waiting.
    """
    del settings  # in the signature so a per-settings limit name can be added without API change
    url = _configured_api_url()
    if not url or not _limit_exists(url, name):
        yield
        return
    from prefect.concurrency.sync import concurrency

    with concurrency(name, occupy=1, strict=False):
        yield


@asynccontextmanager
async def amodel_call_slot(settings: Settings, name: str = MODEL_CALL_LIMIT) -> AsyncIterator[None]:
    """:func:`model_call_slot` for coroutines: waits for the slot without blocking the loop."""
    del settings
    url = _configured_api_url()
    if not url or not await _alimit_exists(url, name):
        yield
        return
    from prefect.concurrency.asyncio import concurrency

    async with concurrency(name, occupy=1, strict=False):
        yield


# --- task runner ----------------------------------------------------------------------------


def build_task_runner(settings: Settings) -> TaskRunner[Any]:
    """The task runner selected by ``settings.task_runner``.

    - ``threads`` (default): ``ThreadPoolTaskRunner(max_workers=settings.max_workers)``.
    - ``dask``: ``DaskTaskRunner`` connected to ``settings.dask_address`` (an existing cluster's
      scheduler, e.g. ``tcp://10.0.0.5:8786``) or, without an address, a temporary local cluster
      bound to 127.0.0.1 with ``min(max_workers, cpu count)`` worker processes and no dashboard.
    """
    if settings.task_runner == "threads":
        return ThreadPoolTaskRunner(max_workers=settings.max_workers)
    if settings.task_runner == "dask":
        try:
            from prefect_dask import DaskTaskRunner
        except ImportError as exc:  # optional extra
            raise RuntimeError(
                "task_runner='dask' needs the optional extra: pip install -c constraints.txt '.[dask]'"
            ) from exc
        if settings.dask_address:
            return DaskTaskRunner(address=settings.dask_address)  # type: ignore[no-any-return]
        n_workers = max(1, min(settings.max_workers, os.cpu_count() or 1))
        return DaskTaskRunner(  # type: ignore[no-any-return]
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": n_workers,
                "threads_per_worker": 1,
                "processes": True,
                "host": LOOPBACK,
                "dashboard_address": None,
            },
        )
    raise ValueError(f"settings.task_runner: expected 'threads' or 'dask', got {settings.task_runner!r}")


class SettingsTaskRunner(ThreadPoolTaskRunner):  # type: ignore[type-arg]
    """The veille flow's task runner: the real one is chosen from Settings when a run starts.

    Prefect enters ``flow.task_runner.duplicate()`` at the start of every flow run, so returning
    :func:`build_task_runner` here makes ``settings.task_runner`` (veille.toml or VEILLE_TASK_RUNNER
    in the worker's environment) apply to `veille run`, deployments and `veille serve` alike,
    without building anything at import time.
    """

    def duplicate(self) -> Self:
        return cast(Self, build_task_runner(Settings()))


def settings_task_runner() -> TaskRunner[PrefectFuture[Any]]:
    """A :class:`SettingsTaskRunner`, typed as ``@flow(task_runner=...)`` expects.

    The cast is only for mypy: Prefect 3.9 annotates the parameter as
    ``TaskRunner[PrefectFuture[Any]]``, which even its own ``ThreadPoolTaskRunner()`` does not match.
    """
    return cast("TaskRunner[PrefectFuture[Any]]", SettingsTaskRunner())


# --- schedules ------------------------------------------------------------------------------


def nightly_schedule(cron: str = NIGHTLY_CRON, timezone: str = NIGHTLY_TIMEZONE) -> Schedule:
    """A timezone-aware cron schedule (``serve(cron=...)`` alone would be read in UTC)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from prefect.schedules import Cron

    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"timezone: {timezone!r} is not an IANA time zone (e.g. 'Europe/Paris')") from exc
    return Cron(cron, timezone=timezone)


# --- cleaning -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanTarget:
    """A directory ``veille clean`` may delete, and why it exists."""

    path: Path
    what: str


def clean_targets(settings: Settings, *, responses: bool = False) -> list[CleanTarget]:
    """Directories holding persisted task results (and cache records), per working directory.

    The model response cache is only included with ``responses=True``: deleting it makes the
    next run pay for every model call again.
    """
    targets = [
        CleanTarget(
            settings.warehouse_dir / "prefect-results",
            "Prefect task results and cache records (retry only the failed branches)",
        )
    ]
    if responses:
        targets.append(CleanTarget(settings.cache_dir, "model response cache"))
    return targets


def clean(targets: Sequence[CleanTarget], *, dry_run: bool = False) -> list[Path]:
    """Delete the existing target directories; return those deleted (or that would be)."""
    removed: list[Path] = []
    for target in targets:
        path = target.path
        if not path.exists():
            continue
        if not path.is_dir():
            raise ValueError(f"{path}: expected a directory to clean, found a file")
        if not dry_run:
            shutil.rmtree(path)
        removed.append(path)
    return removed
