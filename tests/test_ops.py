"""Unit tests of veille.ops and prefect.yaml (no server process; the ephemeral harness where needed)."""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from veille.ops import limits
from veille.ops.clean import CleanTarget, clean, clean_targets
from veille.ops.limits import amodel_call_slot, model_call_slot
from veille.ops.runners import SettingsTaskRunner, build_task_runner
from veille.ops.schedule import nightly_schedule
from veille.ops.server import free_port, server_env, stop_process
from veille.ops.setup import DEFAULT_POOL, ensure_model_call_limit, ensure_work_pool
from veille.settings import Settings

PROJECT_ROOT = Path(__file__).resolve().parents[1]


# --- environment, ports ----------------------------------------------------------------------


def test_server_env_points_ui_and_clients_at_the_chosen_port(tmp_path: Path) -> None:
    env = server_env(port=4321, home=tmp_path, base={"PATH": "/bin", "PREFECT_API_URL": "http://x/api"})
    assert env["PREFECT_API_URL"] == "http://127.0.0.1:4321/api"
    # Without this the UI would call the API on the default port 4200.
    assert env["PREFECT_UI_API_URL"] == "http://127.0.0.1:4321/api"
    assert env["PREFECT_SERVER_API_PORT"] == "4321"
    assert env["PREFECT_SERVER_API_HOST"] == "127.0.0.1"
    assert env["PREFECT_HOME"] == str(tmp_path)
    assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
    assert env["DO_NOT_TRACK"] == "1"
    assert env["PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT"] == "false"
    assert env["PATH"] == "/bin"


def test_free_port_is_bindable_on_loopback() -> None:
    port = free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))


# --- schedule --------------------------------------------------------------------------------


def _next_runs_utc(cron: str, timezone: str | None, start: datetime) -> list[datetime]:
    from prefect.server.schemas.schedules import CronSchedule

    dates = asyncio.run(CronSchedule(cron=cron, timezone=timezone).get_dates(n=2, start=start))
    return [d.astimezone(UTC) for d in dates]


def test_nightly_schedule_fires_at_two_in_paris_across_dst() -> None:
    schedule = nightly_schedule()
    assert (schedule.cron, schedule.timezone) == ("0 2 * * *", "Europe/Paris")
    winter = _next_runs_utc(schedule.cron or "", schedule.timezone, datetime(2027, 1, 10, 12, tzinfo=UTC))
    summer = _next_runs_utc(schedule.cron or "", schedule.timezone, datetime(2027, 7, 10, 12, tzinfo=UTC))
    assert [(d.hour, d.minute) for d in winter] == [(1, 0), (1, 0)]  # CET = UTC+1
    assert [(d.hour, d.minute) for d in summer] == [(0, 0), (0, 0)]  # CEST = UTC+2
    # What serve(cron=...) alone would do: 02:00 UTC, an hour or two late in Paris.
    utc_only = _next_runs_utc("0 2 * * *", None, datetime(2027, 7, 10, 12, tzinfo=UTC))
    assert utc_only[0].hour == 2


def test_nightly_schedule_rejects_unknown_timezone() -> None:
    with pytest.raises(ValueError, match=r"timezone.*Europe/Pariss"):
        nightly_schedule(timezone="Europe/Pariss")


# --- prefect.yaml ----------------------------------------------------------------------------


def _nightly() -> dict:
    config = yaml.safe_load((PROJECT_ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    (deployment,) = [d for d in config["deployments"] if d["name"] == "veille-nightly"]
    return {"config": config, "deployment": deployment}


def test_prefect_yaml_validates_with_prefects_own_model() -> None:
    from prefect.cli.deploy._models import PrefectYamlModel

    config = _nightly()["config"]
    PrefectYamlModel.model_validate(config)


def test_prefect_yaml_nightly_deployment() -> None:
    loaded = _nightly()
    config, deployment = loaded["config"], loaded["deployment"]
    assert (
        deployment["entrypoint"] == "flows.veille:veille_flow"
    )  # the checkout's thin entry point (not in the wheel)
    assert deployment["schedules"] == [{"cron": "0 2 * * *", "timezone": "Europe/Paris", "active": True}]
    assert deployment["work_pool"]["name"] == DEFAULT_POOL
    # The pull step must take its directory from the build step that records the checkout path.
    (pull,) = config["pull"]
    directory = pull["prefect.deployments.steps.set_working_directory"]["directory"]
    (build,) = config["build"]
    step_id = build["prefect.deployments.steps.run_shell_script"]["id"]
    assert directory == "{{ " + step_id + ".stdout }}"
    # Secrets are never stored in the deployment.
    text = (PROJECT_ROOT / "prefect.yaml").read_text(encoding="utf-8")
    for key in ("GEMINI_API_KEY:", "GOOGLE_API_KEY:"):
        assert key not in text


def test_prefect_yaml_entrypoint_loads_the_flow_in_a_fresh_interpreter() -> None:
    # What a worker's flow-run process does; a script path like flows/veille.py:veille_flow would
    # be loaded as the module "veille" and shadow the veille package (ImportError at run time).
    entrypoint = _nightly()["deployment"]["entrypoint"]
    code = (
        "import sys; from prefect.flows import load_flow_from_entrypoint; "
        f"f = load_flow_from_entrypoint({entrypoint!r}, use_placeholder_flow=False); print(f.name)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "veille"


def test_prefect_yaml_parameters_match_the_flow_signature() -> None:
    from veille.flows.veille import veille_flow

    params = _nightly()["deployment"]["parameters"]
    accepted = set(inspect.signature(veille_flow.fn).parameters)
    assert set(params) <= accepted, f"unknown flow parameters in prefect.yaml: {set(params) - accepted}"
    # The deployment's parameters must validate against the flow's schema as Prefect will.
    veille_flow.validate_parameters(params)


# --- task runner -----------------------------------------------------------------------------


def test_build_task_runner_threads_uses_max_workers() -> None:
    from prefect.task_runners import ThreadPoolTaskRunner

    runner = build_task_runner(Settings(task_runner="threads", max_workers=3))
    assert isinstance(runner, ThreadPoolTaskRunner)
    assert runner._max_workers == 3


def test_build_task_runner_dask_address_or_local_loopback_cluster() -> None:
    from prefect_dask import DaskTaskRunner

    remote = build_task_runner(Settings(task_runner="dask", dask_address="tcp://10.1.2.3:8786"))
    assert isinstance(remote, DaskTaskRunner)
    assert remote.address == "tcp://10.1.2.3:8786"
    local = build_task_runner(Settings(task_runner="dask", max_workers=64))
    assert isinstance(local, DaskTaskRunner)
    assert local.address is None
    assert local.cluster_kwargs["host"] == "127.0.0.1"
    assert local.cluster_kwargs["dashboard_address"] is None
    assert 1 <= local.cluster_kwargs["n_workers"] <= (os.cpu_count() or 1)


def test_settings_task_runner_picks_the_runner_when_the_run_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.task_runners import ThreadPoolTaskRunner
    from prefect_dask import DaskTaskRunner

    runner = SettingsTaskRunner()
    monkeypatch.setenv("VEILLE_TASK_RUNNER", "threads")
    monkeypatch.setenv("VEILLE_MAX_WORKERS", "5")
    threads = runner.duplicate()
    assert type(threads) is ThreadPoolTaskRunner
    assert threads._max_workers == 5
    monkeypatch.setenv("VEILLE_TASK_RUNNER", "dask")
    monkeypatch.setenv("VEILLE_DASK_ADDRESS", "tcp://10.9.9.9:8786")
    dask = runner.duplicate()
    assert isinstance(dask, DaskTaskRunner)
    assert dask.address == "tcp://10.9.9.9:8786"


def test_build_task_runner_rejects_unknown_runner() -> None:
    bad = Settings.model_construct(task_runner="ray")
    with pytest.raises(ValueError, match=r"task_runner.*'ray'"):
        build_task_runner(bad)


# --- clean -----------------------------------------------------------------------------------


def test_clean_removes_results_and_keeps_responses_unless_asked(tmp_path: Path) -> None:
    settings = Settings(warehouse_dir=tmp_path)
    results = tmp_path / "prefect-results"
    (results / "sub").mkdir(parents=True)
    (results / "sub" / "record").write_text("x")
    settings.cache_dir.mkdir()
    (settings.cache_dir / "resp.json").write_text("{}")
    (tmp_path / "parquet").mkdir()

    assert clean(clean_targets(settings), dry_run=True) == [results]
    assert results.exists()
    assert clean(clean_targets(settings)) == [results]
    assert not results.exists()
    assert settings.cache_dir.exists() and (tmp_path / "parquet").exists()
    assert clean(clean_targets(settings, responses=True)) == [settings.cache_dir]
    assert not settings.cache_dir.exists()
    assert (tmp_path / "parquet").exists()


def test_clean_targets_match_the_flow_result_storage(tmp_path: Path) -> None:
    from veille.run.inputs import results_dir

    settings = Settings(warehouse_dir=tmp_path)
    assert results_dir(settings) in [t.path for t in clean_targets(settings)]


def test_clean_refuses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "prefect-results"
    target.write_text("not a dir")
    with pytest.raises(ValueError, match=r"prefect-results.*expected a directory"):
        clean([CleanTarget(target, "results")])


def test_cli_clean_and_setup_without_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from veille.cli import _register_all, app

    _register_all()
    (tmp_path / "prefect-results").mkdir()
    result = CliRunner().invoke(app, ["clean", "--warehouse", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "deleted" in result.output and not (tmp_path / "prefect-results").exists()

    monkeypatch.setenv("PREFECT_API_URL", "")
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: None}):
        result = CliRunner().invoke(app, ["setup"])
    assert result.exit_code == 2
    assert "PREFECT_API_URL" in result.output


# --- process helpers -------------------------------------------------------------------------


def test_stop_process_needs_the_second_signal_and_kills_the_group(tmp_path: Path) -> None:
    # A parent that ignores the first SIGTERM (like a busy Prefect worker) and has a child.
    ready = tmp_path / "ready"
    script = textwrap.dedent(
        f"""
        import signal, subprocess, sys, time, pathlib
        seen = []
        def on_term(*_):
            seen.append(1)
            if len(seen) >= 2:
                sys.exit(3)
        signal.signal(signal.SIGTERM, on_term)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pathlib.Path({str(ready)!r}).write_text(str(child.pid))
        while True:
            time.sleep(0.1)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    deadline = time.monotonic() + 60
    while not ready.exists() or not ready.read_text():
        assert time.monotonic() < deadline, "helper process did not start"
        time.sleep(0.05)
    child_pid = int(ready.read_text())
    code = stop_process(proc, signals=(signal.SIGTERM, signal.SIGTERM), grace_s=5)
    assert code == 3  # exited on the second signal, not killed
    deadline = time.monotonic() + 10
    while _alive(child_pid):
        assert time.monotonic() < deadline, "child left running"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); check its state.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


# --- server objects and the model-call slot (ephemeral API) -----------------------------------


@pytest.fixture()
def harness_client(prefect_harness: None):  # type: ignore[no-untyped-def]
    from prefect.client.orchestration import get_client

    limits._limit_cache.clear()
    with get_client(sync_client=True) as client:
        yield client
    limits._limit_cache.clear()


def test_ensure_work_pool_is_idempotent(harness_client) -> None:  # type: ignore[no-untyped-def]
    name = f"pool-{os.getpid()}-{time.monotonic_ns()}"
    assert ensure_work_pool(harness_client, name) is True
    assert ensure_work_pool(harness_client, name) is False
    pool = harness_client.read_work_pool(name)
    assert pool.type == "process"
    assert "command" in pool.base_job_template["variables"]["properties"]


def test_ensure_model_call_limit_creates_then_resizes(harness_client) -> None:  # type: ignore[no-untyped-def]
    name = f"limit-{os.getpid()}-{time.monotonic_ns()}"
    assert ensure_model_call_limit(harness_client, 3, name=name) is True
    assert ensure_model_call_limit(harness_client, 5, name=name) is False
    assert harness_client.read_global_concurrency_limit_by_name(name).limit == 5
    with pytest.raises(ValueError, match=">= 1"):
        ensure_model_call_limit(harness_client, 0, name=name)


def test_model_call_slot_occupies_the_global_limit_only_when_it_exists(harness_client) -> None:  # type: ignore[no-untyped-def]
    name = f"calls-{os.getpid()}-{time.monotonic_ns()}"
    settings = Settings()
    # No limit on the server: a no-op (the model layer's local cap still applies).
    with model_call_slot(settings, name=name):
        pass
    limits._limit_cache.clear()
    ensure_model_call_limit(harness_client, 2, name=name)
    with model_call_slot(settings, name=name):
        assert harness_client.read_global_concurrency_limit_by_name(name).active_slots == 1
        with model_call_slot(settings, name=name):
            assert harness_client.read_global_concurrency_limit_by_name(name).active_slots == 2
    assert harness_client.read_global_concurrency_limit_by_name(name).active_slots == 0


def test_model_call_slot_without_api_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    def boom(*_args: object, **_kwargs: object) -> bool:
        raise AssertionError("no API lookup expected without a server")

    monkeypatch.setattr(limits, "_limit_exists", boom)
    with temporary_settings(updates={PREFECT_API_URL: None}), model_call_slot(Settings()):
        pass


def test_amodel_call_slot_from_another_event_loop_thread(harness_client) -> None:  # type: ignore[no-untyped-def]
    # The model layer runs its calls on its own event-loop thread, outside any Prefect context.
    import threading

    name = f"acalls-{os.getpid()}-{time.monotonic_ns()}"
    ensure_model_call_limit(harness_client, 1, name=name)
    seen: list[int] = []
    errors: list[BaseException] = []

    async def one_call() -> None:
        async with amodel_call_slot(Settings(), name=name):
            seen.append(harness_client.read_global_concurrency_limit_by_name(name).active_slots)
            await asyncio.sleep(0.2)

    async def two_calls() -> None:
        await asyncio.gather(one_call(), one_call())

    def run() -> None:
        try:
            asyncio.run(two_calls())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=120)
    assert not errors, errors
    # A limit of 1: the two calls held the slot one after the other, never together.
    assert seen == [1, 1]
    assert harness_client.read_global_concurrency_limit_by_name(name).active_slots == 0


def test_cli_serve_refuses_without_a_server_and_checks_its_options(tmp_path: Path) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from typer.testing import CliRunner

    from veille.cli import _register_all, app

    _register_all()
    runner = CliRunner()
    with temporary_settings(updates={PREFECT_API_URL: None}):
        # An ephemeral API has no scheduler: serving would never fire, so it refuses.
        result = runner.invoke(app, ["serve"])
        assert result.exit_code == 2
        assert "--start-server" in result.output and "PREFECT_API_URL" in result.output
        result = runner.invoke(app, ["serve", "--timezone", "Mars/Olympus"])
        assert result.exit_code == 2 and "Mars/Olympus" in result.output
        result = runner.invoke(app, ["serve", "--cron", "0 25 * * *"])
        assert result.exit_code == 2 and "0 25 * * *" in result.output
        result = runner.invoke(app, ["serve", "--backend", "gpt"])
        assert result.exit_code == 2 and "'gpt'" in result.output
        result = runner.invoke(app, ["serve", "--corpus", str(tmp_path / "missing")])
        assert result.exit_code == 2 and "missing" in result.output
