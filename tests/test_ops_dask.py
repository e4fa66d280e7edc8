"""The veille flow on a local 2-worker Dask cluster bound to 127.0.0.1, selected through settings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from veille.ops.runners import SettingsTaskRunner

pytestmark = [pytest.mark.process, pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture()
def dask_cluster(prefect_harness: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from distributed import LocalCluster
    from prefect.settings import PREFECT_API_URL

    # Worker processes inherit the environment when they start: give them the harness API,
    # otherwise each would start its own ephemeral Prefect server.
    api = PREFECT_API_URL.value()
    assert api, "the Prefect test harness should provide an API URL"
    monkeypatch.setenv("PREFECT_API_URL", api)
    cluster = LocalCluster(n_workers=2, processes=True, host="127.0.0.1", dashboard_address=None)
    try:
        yield cluster
    finally:
        cluster.close(timeout=60)


def test_flow_runs_on_an_existing_dask_cluster(
    dask_cluster: Any, bundled_corpus: Path, warehouse_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from distributed import Client, get_task_stream
    from prefect_dask import DaskTaskRunner

    from veille.flows.veille import veille_flow

    address = dask_cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    monkeypatch.setenv("VEILLE_TASK_RUNNER", "dask")
    monkeypatch.setenv("VEILLE_DASK_ADDRESS", address)
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse_dir))
    # What a run does at start: the settings pick the Dask runner pointed at the cluster.
    runner = SettingsTaskRunner().duplicate()
    assert isinstance(runner, DaskTaskRunner) and runner.address == address

    with Client(address) as client, get_task_stream(client) as stream:
        # The flow itself, as `veille run` and deployments call it: no with_options.
        state = veille_flow(corpus=str(bundled_corpus), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())

    # The mapped analysts ran on the cluster's two worker processes.
    workers = {item["worker"] for item in stream.data}
    assert len(stream.data) >= 6 and len(workers) == 2, (len(stream.data), workers)
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "completed" and run["subtasks_failed"] == 0
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text().splitlines()]
    # Every analyst call (made in the worker processes) reached the run's journal.
    assert {c["subtask_id"] for c in calls if c["role"] == "analyst"} == {
        st["id"] for st in plan["sub_tasks"]
    }
    assert list((warehouse_dir / "parquet" / "runs").rglob("*.parquet"))
