"""Two `veille run` at the same time on the same warehouse: both complete, both are recorded, and no
lock error reaches the user.

DuckDB lets one process write the corpus database and no other process read it meanwhile. Both runs
start by ingesting: to make them meet there for sure, each holds its ingestion transaction open for
``PAUSE_S`` (``VEILLE_TEST_PAUSE_AT=ingest:<s>``, tests/killhooks.py), so the second one finds the
file locked and has to wait (veille/dblock.py). The evidence that they met: the two ingestions'
[started, finished] intervals (``ingest_runs``) overlap, which one writer at a time allows only if
the later one waited. Runs are real `veille` processes (``veille.cli.main``, forked from one
pre-imported process each time, tests/crashkit.py; each opens its own DuckDB and Prefect clients),
against the test harness's API server, then with no server at all: each run then starts Prefect's
temporary API on the same PREFECT_HOME (the default of `veille run`), one after the other
(veille/ops/ephemeral.py), so the second reaches its ingestion several seconds later; it holds its
transaction longer there (``PAUSE_NO_SERVER_S``) and the overlap is reported rather than required.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.crashkit import (
    PROJECT_ROOT,
    Zygote,
    assert_warehouse_consistent,
    corpus_hashes,
    database_state,
    prefect_env,
    run_folder_from_output,
    warehouse_state,
)

pytestmark = [pytest.mark.process, pytest.mark.slow, pytest.mark.timeout(600)]

PAUSE_S = 10.0  # two cold interpreters on a loaded 2-core CI machine reached ingestion 6.2 s apart (stop 32)
PAUSE_NO_SERVER_S = 12.0
# What a lock problem would look like to a user: DuckDB's, SQLite's (Prefect's database), a traceback.
LOCK_MESSAGES = re.compile(r"Could not set lock|Conflicting lock|database is locked|IOException|Traceback")


def _run_pair(
    corpus: Path, warehouse: Path, env: dict[str, str], logs: Path, pause_s: float
) -> list[tuple[int, str, str]]:
    """Two ``veille run`` at once, forked from one pre-imported process (tests/crashkit.py: the CLI
    with the test observer that honours VEILLE_TEST_PAUSE_AT, tests/killhooks.py). Prefect reads
    ``PREFECT_*`` at import: those go in the zygote's environment, ``VEILLE_*`` in each run's."""
    argv = ["run", "--corpus", str(corpus), "--warehouse", str(warehouse), "--backend", "offline"]
    run_env = {k: v for k, v in env.items() if k.startswith("VEILLE_")}
    run_env["VEILLE_TEST_PAUSE_AT"] = f"ingest:{pause_s}"
    zygote_env = {k: v for k, v in env.items() if not k.startswith("VEILLE_")}
    # The temporary API's module (SubprocessASGIServer), which each run imports before starting one.
    zygote = Zygote(zygote_env, logs, preload=("prefect.server.api.server",))
    try:
        pids = [zygote.start(argv, run_env) for _ in range(2)]
        done = [zygote.wait(timeout_s=400, pid=pid) for pid in pids]
    finally:
        zygote.close()
    return [(r.code, r.out, r.err) for r in done]


def _ingestion_intervals(db_path: Path) -> list[tuple[datetime, datetime]]:
    """(started_at, finished_at) of each ingestion in commit order. ``finished_at`` is taken when the
    transaction's last row is written, before the test pause and the COMMIT."""
    import duckdb

    con = duckdb.connect(str(db_path), read_only=True)
    try:
        rows = con.table("ingest_runs").project("started_at, finished_at").fetchall()
    finally:
        con.close()
    return sorted(((a, b) for a, b in rows), key=lambda r: r[1])


@pytest.fixture()
def harness_api(prefect_harness: None) -> str:
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    assert url
    return str(url)


@pytest.mark.parametrize("api", ["server", "no server"])
def test_two_runs_at_once_on_one_warehouse(
    api: str, request: pytest.FixtureRequest, tmp_path: Path, reliability: Any
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(PROJECT_ROOT / "corpus", corpus)
    warehouse, logs = tmp_path / "warehouse", tmp_path / "logs"
    logs.mkdir()
    if api == "server":
        env = prefect_env(request.getfixturevalue("harness_api"), tmp_path / "prefect-home")
    else:  # both runs start a temporary API on the same PREFECT_HOME (and its SQLite database)
        env = prefect_env("", tmp_path / "prefect-home")
        env.pop("PREFECT_API_URL")
        # Each its own temporary API (the harder case: two servers, one database); the shared API
        # would also outlive the test by its idle timeout.
        env["VEILLE_PREFECT_SERVER"] = "temporary"

    started = time.monotonic()
    pause_s = PAUSE_S if api == "server" else PAUSE_NO_SERVER_S
    results = _run_pair(corpus, warehouse, env, logs, pause_s)
    elapsed = time.monotonic() - started

    for code, out, err in results:
        assert code == 0, f"exit {code}\n{out[-2000:]}\n{err[-4000:]}"
        assert not LOCK_MESSAGES.search(out + err), LOCK_MESSAGES.search(out + err)
    run_dirs = [run_folder_from_output(out) for _, out, _ in results]
    assert run_dirs[0] != run_dirs[1]
    for run_dir in run_dirs:
        assert json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["status"] == "completed"
        assert (run_dir / "report.md").exists()

    # They met in the ingestion: the second began before the first released the file, so it waited.
    first, second = _ingestion_intervals(warehouse / "veille.duckdb")
    first_released = first[1] + timedelta(seconds=pause_s)
    overlap_s = (first_released - second[0]).total_seconds()
    if api == "server":
        assert overlap_s > 0, f"the ingestions did not overlap: {first} then {second}"
    ingest_s = sorted(
        json.loads((d / "ingest.json").read_text(encoding="utf-8"))["duration_s"] for d in run_dirs
    )

    state = warehouse_state(warehouse)
    assert_warehouse_consistent(state)
    assert state.committed == {d.name for d in run_dirs}
    assert sorted(state.statuses.values()) == ["completed", "completed"]
    db = database_state(warehouse / "veille.duckdb")
    assert set(db.documents.values()) == corpus_hashes(corpus) and db.ingest_runs == 2

    reliability.record(
        f"two `veille run` started together on one warehouse ({api}: "
        + ("the test API server" if api == "server" else "each run's temporary API on one PREFECT_HOME")
        + f"), each holding its ingestion transaction {pause_s:.0f} s",
        "the second waits for DuckDB's one-writer lock (retry with backoff) instead of failing; both "
        "complete and are recorded; no lock error in their output",
        f"exit codes 0 and 0; the second ingestion began {overlap_s:.1f} s before the first released the "
        f"database (negative: after) and took {ingest_s[1]:.1f} s (first {ingest_s[0]:.1f} s); 2 runs committed, "
        "2 index rows, 2 ingestion rows; "
        f"no lock message or traceback in stdout/stderr ({elapsed:.0f} s for the pair)",
    )
