"""A Prefect API shared by consecutive `veille run`, stopping itself when idle (issue 15, start-up).

Without ``PREFECT_API_URL`` each `veille run` used to start Prefect's temporary API and stop it at
exit: about 5–6 s of a 12 s run (docs/operations.md, "Start-up"). In ``shared`` mode (the default,
``VEILLE_PREFECT_SERVER``) the first run starts the same server (same command, same environment,
same ``PREFECT_HOME`` database) as a detached process, and the next runs use it while it answers.

Who keeps it alive: every client holds a shared ``flock`` on a lease file in ``PREFECT_HOME`` for
its whole life; the kernel drops it when the client exits, however it exits (SIGKILL included).
The server's keeper (``python -m veille.ops.shared_keeper``) tries an exclusive lock on that file
every second; once nobody has held the lease for ``idle_s`` seconds it keeps the exclusive lock
(no client can start using it meanwhile), removes the state file, stops uvicorn and exits. The
uvicorn process dies with its keeper (parent-death signal), so killing the keeper leaves nothing.

Starting is serialised with a start lock in its folder: one server starts at a time on a database,
so the migrations never run twice at once.

One checkout, one server (veille.ops.checkout): these files and the database are in this checkout's
and venv's ``<PREFECT_HOME>/veille-shared-api/<key>``; a client uses only a keeper of its own (usable).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from veille.ops.checkout import SHARED_API_KIND, current_identity, keyed_home

__all__ = [
    "LEASE_NAME",
    "STATE_NAME",
    "SharedApi",
    "SharedApiError",
    "SharedApiState",
    "acquire_shared_api",
    "default_home",
    "early_lease",
    "healthy",
    "prefect_api",
    "prefect_version",
    "read_state",
    "shared_home",
    "stop_shared_api",
    "usable",
]

LEASE_NAME = ".veille-shared-api.lease"
STATE_NAME = ".veille-shared-api.json"
LOG_NAME = "veille-shared-api.log"
STARTING_NAME = ".veille-shared-api.starting"
_START_LOCK = ".veille-temporary-api.lock"  # the temporary API's start lock (veille.ops.ephemeral)


class SharedApiError(RuntimeError):
    """The shared API could not be started or reached (the message names the log file)."""


@dataclass(frozen=True)
class SharedApiState:
    """What the keeper writes once its server answers (``<PREFECT_HOME>/.veille-shared-api.json``)."""

    url: str
    port: int
    keeper_pid: int
    server_pid: int
    prefect_version: str
    idle_s: float
    started_utc: str
    checkout: str  # veille.ops.checkout.Identity of the keeper: whose code it serves
    environment: str

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SharedApiState:
        return cls(
            url=str(raw["url"]),
            port=int(raw["port"]),
            keeper_pid=int(raw["keeper_pid"]),
            server_pid=int(raw["server_pid"]),
            prefect_version=str(raw["prefect_version"]),
            idle_s=float(raw["idle_s"]),
            started_utc=str(raw["started_utc"]),
            checkout=str(raw["checkout"]),
            environment=str(raw["environment"]),
        )

    def ours(self) -> bool:
        """Started by this checkout and virtual environment (a state file of another layout, or
        copied from elsewhere, is not)."""
        me = current_identity()
        return (self.checkout, self.environment) == (me.checkout, me.environment)


def read_state(home: Path) -> SharedApiState | None:
    """The shared API's state file, or None (absent, unreadable or of another layout)."""
    try:
        return SharedApiState.from_json(json.loads((home / STATE_NAME).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def prefect_version() -> str:
    """The installed Prefect's version (a server of another version is not used)."""
    return importlib.metadata.version("prefect")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: not ours to use
        return False
    try:  # a zombie (killed, not yet reaped by the client that spawned it) serves nothing
        return "Z" not in Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[:1]
    except OSError:
        return True  # no /proc (macOS): the signal probe is all we have


def healthy(url: str, timeout_s: float = 2.0) -> bool:
    """True when ``<url>/health`` answers 200 (loopback only: the URL is the keeper's own)."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout_s) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError, ValueError):
        return False


def usable(state: SharedApiState | None) -> bool:
    """A state of this checkout and environment whose keeper lives, of this Prefect version, whose
    server answers."""
    return (
        state is not None
        and state.ours()
        and state.prefect_version == prefect_version()
        and _alive(state.keeper_pid)
        and healthy(state.url)
    )


class SharedApi:
    """A client's hold on the shared API: the lease (kept until :meth:`release` or process exit)
    and, once :meth:`wait` returned, the URL. Acquire it early, import the flow, then wait: the
    server's start overlaps the client's imports."""

    def __init__(
        self,
        home: Path,
        lease: IO[str],
        state: SharedApiState | None,
        start_lock: IO[str] | None,
        idle_s: float = 0.0,
    ) -> None:
        self.home = home
        self._lease = lease
        self._state = state
        # Held while a keeper starts (migrations): released once its server answers.
        self._start_lock = start_lock
        self.started = False  # this client started the keeper (it says so once the server answers)
        self.idle_s = idle_s

    def wait(self, timeout_s: float) -> str:
        """The API URL, once the server answers (raises SharedApiError after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        try:
            while self._state is None:
                state = read_state(self.home)
                if usable(state):
                    self._state = state
                    break
                if time.monotonic() > deadline or not (_starting_keeper(self.home) or _serving_slowly(state)):
                    raise SharedApiError(
                        f"the shared Prefect API did not answer within {timeout_s:.0f} s "
                        f"(see {self.home / LOG_NAME}; VEILLE_PREFECT_SERVER=temporary avoids it)"
                    )
                time.sleep(0.1)
        finally:
            self._unlock_start()
        assert self._state is not None
        return self._state.url

    def _unlock_start(self) -> None:
        if self._start_lock is not None:
            with contextlib.suppress(OSError):
                self._start_lock.close()  # closing the file drops its flock
            self._start_lock = None

    def release(self) -> None:
        """Drop the lease (the idle countdown starts when the last client drops it)."""
        self._unlock_start()
        with contextlib.suppress(OSError):
            self._lease.close()


def acquire_shared_api(home: Path, idle_s: float) -> SharedApi:
    """Take a lease on ``home``'s shared API, starting its keeper if none answers (non-blocking
    unless another server is starting: call :meth:`SharedApi.wait` for the URL)."""
    import fcntl

    home.mkdir(parents=True, exist_ok=True)
    lease = (home / LEASE_NAME).open("a", encoding="utf-8")
    # Blocks only while a keeper is stopping (it holds the lease exclusively): then it is gone.
    fcntl.flock(lease.fileno(), fcntl.LOCK_SH)
    state = read_state(home)
    if usable(state):
        return SharedApi(home, lease, state, None)
    start = (home / _START_LOCK).open("a", encoding="utf-8")
    fcntl.flock(start.fileno(), fcntl.LOCK_EX)  # one server starts at a time on a PREFECT_HOME
    state = read_state(home)  # another client may have started one while we waited
    if usable(state):
        start.close()
        return SharedApi(home, lease, state, None)
    api = SharedApi(home, lease, None, start, idle_s)
    if _serving_slowly(state):
        return api  # its keeper lives: a loaded machine answers late; wait() polls, not a second server
    if _starting_keeper(home) is None:  # else one is starting, left by a client killed meanwhile
        _stop_stale(home, state)
        _spawn_keeper(home, idle_s)
        api.started = True
    return api


def _serving_slowly(state: SharedApiState | None) -> bool:
    """A state of this Prefect version whose keeper lives (its server missed one health probe).
    Replacing it would start a second server on the same database."""
    return (
        state is not None
        and state.ours()
        and state.prefect_version == prefect_version()
        and _alive(state.keeper_pid)
        and _alive(state.server_pid)
    )


def _starting_keeper(home: Path) -> int | None:
    """The pid of a keeper still starting its server (its marker names a live process), or None."""
    try:
        pid = int((home / STARTING_NAME).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    return pid if _alive(pid) else None


def _stop_stale(home: Path, state: SharedApiState | None) -> None:
    """A state left by a keeper that no longer serves (killed, other Prefect version): stop it."""
    if state is None:
        return
    if _alive(state.keeper_pid) and (state.prefect_version != prefect_version() or not state.ours()):
        # Another Prefect version's (or another code's) server on this database: stop it rather
        # than run two at once.
        with contextlib.suppress(OSError):
            os.kill(state.keeper_pid, signal.SIGTERM)
        for _ in range(100):
            if not _alive(state.keeper_pid):
                break
            time.sleep(0.1)
    with contextlib.suppress(OSError):
        (home / STATE_NAME).unlink()


# A server outliving the run has no use for the model key: it stays out of its environment.
_SECRETS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


def _keeper_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SECRETS}
    env["PREFECT_HOME"] = str(home)
    return env


def _spawn_keeper(home: Path, idle_s: float) -> None:
    with (home / LOG_NAME).open("a", encoding="utf-8") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "veille.ops.shared_keeper", "--home", str(home), "--idle", str(idle_s)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # outlives this run, away from its terminal's signals
            env=_keeper_env(home),
            cwd=home,  # `-m` puts the cwd first on sys.path: a caller's cwd in another checkout
        )
    # Written here too (the keeper rewrites it): a client that takes the start lock after this
    # one dies sees a keeper starting and waits for it instead of starting a second server.
    (home / STARTING_NAME).write_text(str(process.pid), encoding="utf-8")


def stop_shared_api(home: Path, timeout_s: float = 30.0) -> SharedApiState | None:
    """Stop ``home``'s shared API now (``veille shared-api --stop``); returns what was stopped."""
    state = read_state(home)
    if state is None or not _alive(state.keeper_pid):
        with contextlib.suppress(OSError):
            (home / STATE_NAME).unlink()
        return None
    os.kill(state.keeper_pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while _alive(state.keeper_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return state


# --- the client side of `veille run` ------------------------------------------------------------


def default_home() -> Path:
    """``PREFECT_HOME`` as Prefect defaults it (environment, else ~/.prefect), without importing it."""
    return Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()


def shared_home(prefect_home: Path | None = None) -> Path:
    """This checkout's shared API folder under ``prefect_home`` (default :func:`default_home`)."""
    return keyed_home(prefect_home or default_home(), SHARED_API_KIND)


def _profile_sets_api(home: Path) -> bool:
    """Whether the active Prefect profile names an API URL (read without importing Prefect, which
    takes ~1.8 s: the point is to start the server before that). Prefect's own settings decide
    later (:func:`prefect_api`); this only avoids starting a server such a user never uses."""
    import tomllib

    path = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    active = os.environ.get("PREFECT_PROFILE") or raw.get("active") or "ephemeral"
    profile = (raw.get("profiles") or {}).get(active) or {}
    return bool(isinstance(profile, dict) and profile.get("PREFECT_API_URL"))


def early_lease(mode: str, idle_s: float) -> SharedApi | None:
    """In ``shared`` mode and without a configured API, the lease on the shared API (its keeper
    started if none answers), taken before Prefect is imported so the two overlap; else None."""
    if mode != "shared" or os.name != "posix":  # flock: POSIX only
        return None
    if os.environ.get("PREFECT_API_URL") or os.environ.get(
        "PREFECT_SERVER_EPHEMERAL_ENABLED", ""
    ).lower() in (
        "0",
        "false",
    ):
        return None
    home = default_home()
    if _profile_sets_api(home):
        return None
    return acquire_shared_api(shared_home(home), idle_s)


@contextlib.contextmanager
def prefect_api(shared: SharedApi | None, timeout_s: float | None = None) -> Iterator[str | None]:
    """The Prefect API a `veille run` uses, around its flow: a configured one as is; else the shared
    API of :func:`early_lease` (as ``PREFECT_API_URL`` for this process and its children); else,
    or when the shared one fails, Prefect's temporary API (veille.ops.ephemeral)."""
    from prefect.settings import PREFECT_API_URL, PREFECT_HOME, PREFECT_UI_URL, temporary_settings

    from veille.ops.ephemeral import STARTUP_TIMEOUT_S, start_temporary_api

    url: str | None = None
    if shared is not None:
        if (
            PREFECT_API_URL.value()
            or shared_home(Path(PREFECT_HOME.value())).resolve() != shared.home.resolve()
        ):
            shared.release()  # Prefect's settings (a .env, prefect.toml ...) say otherwise: theirs win
        else:
            try:
                url = shared.wait(timeout_s or STARTUP_TIMEOUT_S)
                if shared.started:  # say once that a background process now outlives this run
                    print(
                        f"started a shared Prefect API on {url} for the next runs; it stops after "
                        f"{shared.idle_s:.0f} s without a run (`veille shared-api --stop` stops it now)",
                        file=sys.stderr,
                    )
            except SharedApiError as error:
                shared.release()
                print(f"warning: {error}; using a temporary Prefect API instead", file=sys.stderr)
    if url is None:
        yield start_temporary_api()
        return
    os.environ["PREFECT_API_URL"] = url  # child processes (a Dask cluster's workers) use it too
    try:
        # No "View at <url>" link: this server has no UI (as Prefect's temporary one).
        with temporary_settings(updates={PREFECT_API_URL: url, PREFECT_UI_URL: ""}):
            yield url
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        if shared is not None:
            shared.release()
