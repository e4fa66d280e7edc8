"""End to end against a real Prefect server on loopback: deploy veille-nightly from prefect.yaml, run it
with a branch fault on a warm cache (a night without the drill first), retry it the way the UI does, and
check that the fault fired and only the failed branch ran again.

Run alone with ``pytest -m e2e``. Everything it starts (server, worker, flow-run processes) is stopped
by PID in the fixtures' finalizers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from pytest_httpserver import HTTPServer

from testkit.fake_gemini import FakeGemini
from testkit.flowkit import write_corpus
from testkit.gemini_script import gemini_responder
from tests.e2e.conftest import PROJECT_ROOT, PrefectServer
from veille.ops.limits import MODEL_CALL_LIMIT
from veille.ops.setup import DEFAULT_POOL

pytestmark = [pytest.mark.process, pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(1200)]

FAULTY_BRANCH = "st-2"
CANARY = "AIza-e2e-canary-0123456789-never-stored"
DEPLOYMENT = "veille/veille-nightly"


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _calls(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run_dirs_of(warehouse: Path, flow_run_id: Any) -> list[Path]:
    """Run folders written by one flow run (one per attempt), oldest first."""
    found = [
        run_json.parent
        for run_json in (warehouse / "runs").glob("*/run.json")
        if _json(run_json).get("flow_run_id") == str(flow_run_id)
    ]
    return sorted(found, key=lambda p: p.name)


def _veille(*args: str, env: dict[str, str]) -> str:
    exe = Path(sys.executable).with_name("veille")
    result = subprocess.run(
        [str(exe), *args], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"veille {' '.join(args)}: {result.stdout}\n{result.stderr}"
    return result.stdout


def _log_messages(server: PrefectServer, flow_run_id: Any) -> list[str]:
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    with server.client() as client:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
    return [log.message for log in logs]


@pytest.fixture()
def fake_gemini() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        fake.responder = gemini_responder()
        yield fake


def test_nightly_deployment_fails_on_a_branch_then_ui_retry_reruns_only_that_branch(
    prefect_server: PrefectServer,
    start_worker: Any,
    fake_gemini: FakeGemini,
    tmp_path: Path,
    httpserver: HTTPServer,
) -> None:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.states import AwaitingRetry

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    corpus = PROJECT_ROOT / "corpus"

    # --- make deploy: pool + model-call limit (veille setup), then deploy from prefect.yaml ---------
    out = _veille("setup", env=prefect_server.env)
    assert "created" in out
    # The failure automation of a watch whose corpus names its operators (a loopback webhook here):
    # failures go to them, never to the readers (issue 39).
    watched = write_corpus(tmp_path / "watched")
    (watched / "delivery.toml").write_text(
        '[operators]\n\n[[operators.chat]]\nname = "e2e"\nurl_env = "VEILLE_E2E_CHAT"\n'
    )
    watches = tmp_path / "prefect.yaml"
    watches.write_text(f"deployments:\n  - name: veille-nightly\n    parameters: {{corpus: {watched}}}\n")
    httpserver.expect_request("/failed", method="POST").respond_with_data("ok")
    chat_env = {**prefect_server.env, "VEILLE_E2E_CHAT": f"json://127.0.0.1:{httpserver.port}/failed"}
    out = _veille("setup", "--deployments", str(watches), env=chat_env)
    assert "automation 'veille: veille-nightly en échec' (1 channel(s)): created" in out, out
    prefect_server.cli(
        "--no-prompt",
        "deploy",
        "--name",
        "veille-nightly",
        "--params",
        json.dumps({"corpus": str(corpus), "backend": "offline", "fail_subtasks": [FAULTY_BRANCH]}),
    )
    with prefect_server.client() as client:
        deployment = client.read_deployment_by_name(DEPLOYMENT)
        limit = client.read_global_concurrency_limit_by_name(MODEL_CALL_LIMIT)
    assert limit.active and limit.limit >= 1
    assert deployment.work_pool_name == DEFAULT_POOL
    (schedule,) = deployment.schedules
    assert (schedule.schedule.cron, schedule.schedule.timezone) == ("0 2 * * *", "Europe/Paris")
    assert deployment.pull_steps == [
        {"prefect.deployments.steps.set_working_directory": {"directory": str(PROJECT_ROOT)}}
    ]
    with prefect_server.client() as client:
        # Checked; now off, so a nightly falling due during the test cannot queue ahead of our runs.
        client.update_deployment_schedule(deployment.id, schedule.id, active=False)

    # The worker's environment reaches every flow run it starts: settings and the API key.
    start_worker(
        extra_env={
            "VEILLE_WAREHOUSE_DIR": str(warehouse),
            "GEMINI_API_KEY": CANARY,
            "VEILLE_GEMINI_BASE_URL": fake_gemini.base_url,
            "VEILLE_GEMINI_API_VERSION": "v1beta",
            "VEILLE_HTTP_RETRY_INITIAL_DELAY_S": "0.01",
        }
    )

    # --- Last night: a run without the drill leaves every branch in the task cache ---------------
    with prefect_server.client() as client:
        night = client.create_flow_run_from_deployment(deployment.id, parameters={"fail_subtasks": []})
    night = prefect_server.wait_final(night.id)
    assert night.state.is_completed(), (night.state, prefect_server.log_tail())
    (night_dir,) = _run_dirs_of(warehouse, night.id)
    assert FAULTY_BRANCH in {c["subtask_id"] for c in _calls(night_dir) if c["role"] == "analyst"}

    # --- `prefect deployment run 'veille/veille-nightly'`: the branch fault fails the run, warm cache
    out = prefect_server.cli("deployment", "run", DEPLOYMENT)
    match = re.search(r"UUID: ([0-9a-f-]{36})", out)
    assert match, out
    run = prefect_server.wait_final(UUID(match.group(1)))
    assert run.state.is_failed(), (run.state, prefect_server.log_tail())
    assert run.run_count == 1
    # The server's automation told the watch's channel (its triggers and actions run in the server).
    deadline = time.monotonic() + 120
    while not httpserver.log and time.monotonic() < deadline:
        time.sleep(1)
    ((notice, _),) = httpserver.log
    told = json.loads(notice.get_data())
    assert "a échoué" in told["message"] and str(run.id) in told["message"], told
    (first_dir,) = _run_dirs_of(warehouse, run.id)
    first = _json(first_dir / "run.json")
    assert first["status"] == "failed" and first["subtasks_failed"] == 1
    assert first["deployment"] is not None
    findings = _json(first_dir / "findings.json")
    assert findings[FAULTY_BRANCH]["status"] == "failed"
    healthy = {sid for sid, f in findings.items() if f["status"] == "ok"}
    assert healthy and FAULTY_BRANCH not in healthy
    assert (first_dir / "report.md").read_text(encoding="utf-8").strip(), "partial report missing"
    alert_codes = {a["code"] for a in _json(first_dir / "alerts.json")}
    assert {"analyse.branch_failed", "run.partial_report"} <= alert_codes
    # The healthy branches came from last night's cache; the faulty one failed before calling the model.
    assert not [c for c in _calls(first_dir) if c["role"] in ("analyst", "planner")]

    # --- Retry as the UI does: AwaitingRetry, forced ------------------------------------------
    with prefect_server.client() as client:
        result = client.set_flow_run_state(run.id, AwaitingRetry(message="Retry from the UI"), force=True)
    assert result.status.value == "ACCEPT", result
    run = prefect_server.wait_final(run.id)
    assert run.state.is_completed(), (run.state, prefect_server.log_tail())
    assert run.run_count == 2
    first_again, second_dir = _run_dirs_of(warehouse, run.id)
    assert first_again == first_dir
    second = _json(second_dir / "run.json")
    assert second["status"] == "completed" and second["subtasks_failed"] == 0
    assert all(f["status"] == "ok" for f in _json(second_dir / "findings.json").values())
    retry_calls = _calls(second_dir)
    # Only the failed branch called the analyst again; the plan came from the task cache.
    assert {c["subtask_id"] for c in retry_calls if c["role"] == "analyst"} == {FAULTY_BRANCH}
    assert not [c for c in retry_calls if c["role"] == "planner"]
    assert all(c["flow_run_id"] == str(run.id) for c in retry_calls)
    assert "run.partial_report" not in {a["code"] for a in _json(second_dir / "alerts.json")}

    # Prefect's own record agrees: each healthy branch has a Cached task run in the retry.
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterName

    with prefect_server.client() as client:
        task_runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run.id])),
            task_run_filter=TaskRunFilter(name=TaskRunFilterName(like_="analyse-")),
        )
    states: dict[str, list[str]] = {}
    for task_run in task_runs:
        states.setdefault(task_run.name.removeprefix("analyse-"), []).append(task_run.state.name)
    for sid in healthy:  # cached on both attempts (warm cache)
        assert sorted(states[sid]) == ["Cached", "Cached"], (sid, states[sid])
    assert sorted(states[FAULTY_BRANCH]) == ["Completed", "Failed"], states[FAULTY_BRANCH]

    # --- Parquet: both attempts recorded, the retry's llm_calls hold only the failed branch ------
    from veille.warehouse import query

    _, rows = query(
        warehouse / "parquet",
        "SELECT run_id, status, flow_run_attempt, flow_run_attempts FROM run_attempts WHERE run_id IN (?, ?) "
        "ORDER BY run_id",
        [first["run_id"], second["run_id"]],
    )
    assert rows == [(first["run_id"], "failed", 1, 2), (second["run_id"], "completed", 2, 2)]
    # `runs` is one line per flow run: its last attempt.
    _, rows = query(
        warehouse / "parquet", "SELECT run_id, status FROM runs WHERE flow_run_id = ?", [str(run.id)]
    )
    assert rows == [(second["run_id"], "completed")]
    _, rows = query(
        warehouse / "parquet",
        "SELECT DISTINCT subtask_id FROM llm_calls WHERE run_id = ? AND role = 'analyst'",
        [second["run_id"]],
    )
    assert rows == [(FAULTY_BRANCH,)]

    # --- The UI's log view tells the story: one line per step -----------------------------------
    messages = _log_messages(prefect_server, run.id)
    for step in ("ingest:", "plan:", "analyse:", "review:", "record:"):
        assert any(m.startswith(step) for m in messages), f"no '{step}' log line; got {messages[:40]}"

    # --- The run's artifacts are listed by the API --------------------------------------------
    response = httpx.post(
        f"{prefect_server.api_url}/artifacts/filter",
        json={"flow_runs": {"id": {"any_": [str(run.id)]}}},
        timeout=30,
    )
    response.raise_for_status()
    keys = {a["key"] for a in response.json() if a.get("key")}
    assert any(k.startswith("veille-report") for k in keys), keys
    assert any(k.startswith("veille-metrics") for k in keys), keys

    # --- The UI is served ---------------------------------------------------------------------
    page = httpx.get(prefect_server.ui_url, timeout=30)
    assert page.status_code == 200 and "<title>Prefect Server</title>" in page.text
    ui_settings = httpx.get(f"{prefect_server.ui_url}ui-settings", timeout=30).json()
    assert ui_settings["api_url"] == prefect_server.api_url

    # --- Gemini through the real SDK (fake server on loopback), key from the worker's environment.
    # A second run with unchanged inputs makes no model request at all (task + response caches).
    small_corpus = write_corpus(tmp_path / "small-corpus")
    params = {"corpus": str(small_corpus), "backend": "gemini", "fail_subtasks": []}
    with prefect_server.client() as client:
        cold = client.create_flow_run_from_deployment(deployment.id, parameters=params)
    cold = prefect_server.wait_final(cold.id)
    assert cold.state.is_completed(), (cold.state, prefect_server.log_tail())
    requests_cold = len(fake_gemini.requests)
    assert requests_cold >= 5  # planner, analysts, writer, critic...
    assert all(r.headers.get("x-goog-api-key") == CANARY for r in fake_gemini.requests)
    with prefect_server.client() as client:
        warm = client.create_flow_run_from_deployment(deployment.id, parameters=params)
    warm = prefect_server.wait_final(warm.id)
    assert warm.state.is_completed(), warm.state
    assert len(fake_gemini.requests) == requests_cold, "the rerun sent requests to the model"
    (warm_dir,) = _run_dirs_of(warehouse, warm.id)
    assert all(c["cache_hit"] for c in _calls(warm_dir)), "a model call missed the cache"
    assert _json(warm_dir / "run.json")["backend"] == "gemini"

    # Every slot of the model-call limit was given back.
    with prefect_server.client() as client:
        assert client.read_global_concurrency_limit_by_name(MODEL_CALL_LIMIT).active_slots == 0

    # The key never reaches files, logs or the deployment.
    for path in warehouse.rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path
    for run_id in (run.id, cold.id, warm.id):
        assert not any(CANARY in m for m in _log_messages(prefect_server, run_id))
    with prefect_server.client() as client:
        stored = client.read_deployment(deployment.id).model_dump_json()
    assert CANARY not in stored
