"""Machinery check with a tiny flow: deploy, worker, UI-style retry re-runs only the failed branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veille import ops

pytestmark = pytest.mark.e2e


def test_tiny_retry(prefect_server, start_worker, tmp_path: Path) -> None:
    from prefect.states import AwaitingRetry

    out = tmp_path / "out"
    out.mkdir()
    with prefect_server.client() as client:
        ops.ensure_work_pool(client)
    prefect_server.cli(
        "--no-prompt",
        "deploy",
        "--prefect-file",
        "tests/e2e/tiny-prefect.yaml",
        "--name",
        "tiny-dep",
        "--params",
        json.dumps({"fail": [1]}),
    )
    start_worker(extra_env={"TINY_OUT": str(out)})
    with prefect_server.client() as client:
        dep = client.read_deployment_by_name("tiny/tiny-dep")
        run = client.create_flow_run_from_deployment(dep.id)
    run = prefect_server.wait_final(run.id)
    assert run.state.is_failed()
    with prefect_server.client() as client:
        client.set_flow_run_state(run.id, AwaitingRetry(message="Retry from the UI"), force=True)
    run = prefect_server.wait_final(run.id)
    assert run.state.is_completed(), run.state
    rows = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    assert sorted((r["branch"], r["run_count"]) for r in rows) == [(0, 1), (1, 1), (1, 2), (2, 1)]
