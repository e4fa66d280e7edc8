"""Test guards shared by the whole suite.

- No network: any connection to a non-loopback address fails the test (the real google-genai SDK is
  only ever pointed at the fake Gemini server on 127.0.0.1).
- Prefect runs against a temporary PREFECT_HOME with telemetry off, through one session-scoped
  ``prefect_test_harness``.
- No real model requests: Gemini keys are removed from the environment so ``backend=auto`` means offline.
"""

from __future__ import annotations

import gc
import ipaddress
import os
import socket
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from unittest import mock

import pytest

if TYPE_CHECKING:
    from veille.offline.authority import AuthorityRanking

# Set before Prefect is imported anywhere in the test process.
_PREFECT_HOME = tempfile.mkdtemp(prefix="veille-prefect-home-")
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["DO_NOT_TRACK"] = "1"
os.environ["PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT"] = "false"
os.environ["PREFECT_LOCAL_STORAGE_PATH"] = str(Path(_PREFECT_HOME) / "storage")
os.environ["PREFECT_RESULTS_PERSIST_BY_DEFAULT"] = "false"
for _key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "VEILLE_CONFIG"):
    os.environ.pop(_key, None)
for _key in [k for k in os.environ if k.startswith("VEILLE_")]:
    os.environ.pop(_key, None)
# A `veille run` subprocess starts and stops its own temporary Prefect API: no test leaves a shared
# background server behind (tests/test_shared_api.py asks for the shared one explicitly).
os.environ["VEILLE_PREFECT_SERVER"] = "temporary"

PROJECT_ROOT = Path(__file__).resolve().parents[1]
BUNDLED_CORPUS = PROJECT_ROOT / "corpus"


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return True  # AF_UNIX paths and the like
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name other than localhost would need DNS: refuse


class NetworkBlockedError(RuntimeError):
    pass


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _guarded_connect(self: socket.socket, address: object) -> None:
    if (
        self.family in (socket.AF_INET, socket.AF_INET6)
        and isinstance(address, tuple)
        and not _is_loopback(address[0])
    ):
        raise NetworkBlockedError(f"tests may not connect to {address[0]!r}: loopback only")
    return _real_connect(self, address)  # type: ignore[arg-type]


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if (
        self.family in (socket.AF_INET, socket.AF_INET6)
        and isinstance(address, tuple)
        and not _is_loopback(address[0])
    ):
        raise NetworkBlockedError(f"tests may not connect to {address[0]!r}: loopback only")
    return _real_connect_ex(self, address)  # type: ignore[arg-type]


def _guarded_getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
    if host is not None and not _is_loopback(host if isinstance(host, str) else host.decode()):
        raise NetworkBlockedError(f"tests may not resolve {host!r}: loopback only")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo


# The session's server serves the API the flows call, and only that: no test that uses it reads
# Prefect's event feed or waits for an automation to fire (the failure automation is checked against a
# real `veille server` by tests/test_operator_server.py). Storing every event and matching each against
# the triggers was 20-30 % of this server's CPU per flow night (docs/benchmarks.md, "Test suite").
HARNESS_SERVER_ENV = {
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",  # the reactive triggers and their actions
}
# Nor does it keep task runs, unless the session runs a test that reads them back: the task run
# recorder turns each task's state events (three or more per task, ~60 a night) into rows, two thirds
# of the server's CPU per flow night (docs/benchmarks.md, "Test suite"), and with no service left to
# read events the test process sends none (prefect_harness). The tests that read task runs back ask
# for `recording_prefect_api` (tests/test_secrets_canary.py and tests/test_secrets_prefect_states.py
# grep the task runs' state messages for secrets and assert there are some; tests/test_flow.py reads
# the metrics artifact's count of Cached task runs, which veille/tasks/record.py asks the API for).
# When the session has such a test, the same server runs with the recorder on: the test process still
# sends no events outside those tests, so the recorder idles through every other night, and no second
# server is started for them (one server start is ~6.5 s of CPU; docs/benchmarks.md, "Test suite").
NO_TASK_RUN_RECORDER = {"PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED": "false"}
RECORDING_FIXTURE = "recording_prefect_api"
_RECORDS_TASK_RUNS = pytest.StashKey[bool]()


@contextmanager
def _server_environment(env: dict[str, str]) -> Iterator[None]:
    """``env`` in os.environ while a server starts (its process copies the environment when it
    starts; this process keeps its own)."""
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def harness_server_env(items: list[pytest.Item]) -> dict[str, str]:
    """The session server's services: the task run recorder only when a selected test reads task
    runs back (`recording_prefect_api`)."""
    if any(RECORDING_FIXTURE in getattr(item, "fixturenames", ()) for item in items):
        return dict(HARNESS_SERVER_ENV)
    return {**HARNESS_SERVER_ENV, **NO_TASK_RUN_RECORDER}


def _session_folder(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every xdist worker of this session sees (each worker's base is a child of it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if _is_xdist_worker(config) else base


def _database_path(url: str) -> Path:
    return Path(url.split(":///", 1)[1])


@pytest.fixture(scope="session")
def prefect_harness(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """One ephemeral Prefect API for the session (heartbeats off, temporary PREFECT_HOME), on a
    database migrated once per session (tests/prefect_template.py)."""
    from prefect.events.clients import NullEventsClient
    from prefect.events.worker import EventsWorker
    from prefect.settings import get_current_settings
    from prefect.testing.utilities import prefect_test_harness

    from tests.prefect_template import session_database

    env = harness_server_env(request.session.items)
    request.config.stash[_RECORDS_TASK_RUNS] = NO_TASK_RUN_RECORDER.keys().isdisjoint(env)
    with ExitStack() as stack:
        with session_database(_session_folder(request.config, tmp_path_factory)) as database:
            # Prefect's harness makes its database in the folder its mkdtemp() returns: this one.
            with (
                _server_environment({**env, **database.env}),
                mock.patch("prefect.testing.utilities.mkdtemp", return_value=str(database.folder)),
            ):
                stack.enter_context(prefect_test_harness(server_startup_timeout=120))
            used = _database_path(get_current_settings().server.database.connection_url.get_secret_value())
            if used != database.path:  # a Prefect whose harness no longer does so: say it, do not guess
                raise RuntimeError(f"the session server uses {used}, not {database.path}")
        # No service of this server reads events outside the recording tests (above), so this
        # process sends none: Prefect's emit_event returns at once with a client that sends nothing.
        EventsWorker.set_client_override(NullEventsClient)
        stack.callback(EventsWorker.set_client_override, None)
        yield


def _drain_prefect_workers() -> None:
    """Send what Prefect's log and event workers hold, and stop them: each sends with the client it
    was started with, and the next log or event starts one with the client of the moment."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=30)
    EventsWorker.drain_all(timeout=30)


@pytest.fixture()
def recording_prefect_api(request: pytest.FixtureRequest, prefect_harness: None) -> Iterator[None]:
    """The session server keeps the test's task runs: this process sends its events for this test
    (see NO_TASK_RUN_RECORDER)."""
    from prefect.events.worker import EventsWorker

    if not request.config.stash.get(_RECORDS_TASK_RUNS, False):
        # Only when asked with getfixturevalue after the server started without the recorder.
        pytest.fail(
            f"the session server keeps no task runs: ask for {RECORDING_FIXTURE} in the test's signature"
        )
    _drain_prefect_workers()
    override = EventsWorker._client_override  # the session's: no events (prefect_harness)
    EventsWorker.set_client_override(None)  # the task runs are made of the events: send them
    try:
        yield
    finally:
        _drain_prefect_workers()
        EventsWorker._client_override = override


@pytest.fixture()
def bundled_corpus() -> Path:
    return BUNDLED_CORPUS


@pytest.fixture()
def warehouse_dir(tmp_path: Path) -> Path:
    path = tmp_path / "warehouse"
    path.mkdir()
    return path


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# The suite allocates millions of short-lived objects (hypothesis examples, pydantic models, flow
# nights) in processes that live for minutes: CPython's default cyclic collector (a young collection
# every 700 allocations, each older one walking every long-lived object: Prefect's, pydantic's and
# veille's modules) was ~7 % of the CPU of the heaviest files (test_role_schemas, test_faults_flow,
# test_plan_properties: 51.2, 49.6 -> 45.8, 47.0 s of CPU, alternated; docs/benchmarks.md « Test suite »).
# What is imported by now is frozen out of the collections and young ones run 30 times less often;
# garbage is still collected, and the tests that count live objects or peak memory
# (test_corpus_convert, test_corpus_hostile) call gc themselves. The product's processes keep the
# default collector (memory bounds at real size, docs/benchmarks.md « Ingestion at real size »).
GC_THRESHOLDS = (20_000, 20, 20)


def pytest_configure(config: pytest.Config) -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    if not _is_xdist_worker(config):
        from tests.reliability import clear_rows

        clear_rows()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: `make test` sees every process test here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`make test-process` collects only the test files that say `mark.process` (Makefile): a test
    marked `process` another way would run in neither half of the suite, so it is refused."""
    said: dict[Path, bool] = {}
    for item in items:
        if item.get_closest_marker("process") and item.path not in said:
            said[item.path] = "mark.process" in item.path.read_text(encoding="utf-8")
    if unsaid := sorted(str(path) for path, ok in said.items() if not ok):
        raise pytest.UsageError(f"process tests in files without the text `mark.process`: {unsaid}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _is_xdist_worker(session.config):
        from tests.reliability import write_table

        write_table()


@pytest.fixture()
def reliability(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Record a row of docs/reliability.md (fault, expected, observed) once the test's assertions passed."""
    from tests.reliability import Recorder

    return Recorder(request.node.nodeid)


@pytest.fixture(scope="session")
def authority() -> AuthorityRanking:
    """The shipped authority ranking (veille/data/authority.toml), which the offline tests read."""
    # Imported here: nothing of veille is imported before the environment above is set.
    from veille.offline.authority import load_authority
    from veille.resources import data_file

    return load_authority(data_file("authority.toml"))
