"""Prefect operations benchmarks: per-mapped-task overhead, flow start-up, scheduled vs manual latency.

Usage (figures recorded in docs/benchmarks.md, section "Prefect operations"):

    .venv/bin/python bench/fanout.py                      # everything
    .venv/bin/python bench/fanout.py --only ephemeral     # or: server, worker
    .venv/bin/python bench/fanout.py --tasks 10,100,400 --repeat 3

- ``ephemeral`` / ``server``: a fresh child interpreter (``--child``) runs a flow that maps a no-op
  task over N items, for each N, plain and "persisted" (result persisted to a fixed Path with an
  inputs cache policy, as the veille analysts are). The per-task overhead is the slope of the map
  time (submit → all results) between the smallest and the largest N. Start-up: wall time of the
  first and of a second empty flow call in that interpreter. ``ephemeral`` has no PREFECT_API_URL
  (the client starts a temporary API server); ``server`` points at a `prefect server start` on
  127.0.0.1 started by this script.
- ``worker``: a process worker polling every Q seconds (``--poll``, Prefect's default is 10) runs a
  deployment of an empty flow. Manual run: flow run created now → Running. Scheduled run: created
  in the Scheduled state for now + 2Q → Running, measured from its scheduled time. The issue's
  target: scheduled latency ≤ manual latency + Q.

Everything started here (server, worker) is stopped by PID at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import INPUTS

from veille.ops.server import (
    LOOPBACK,
    api_url,
    free_port,
    prefect_command,
    server_env,
    start_prefect_process,
    stop_process,
    telemetry_off_env,
    wait_healthy,
)
from veille.ops.setup import ensure_work_pool

PROJECT_ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------- the bench flows
@task
def noop(i: int) -> int:
    return i


@task(persist_result=True, cache_policy=INPUTS)
def noop_persisted(i: int, salt: str) -> int:
    return i


@flow(name="bench-fanout")
def fanout_flow(n: int, persisted: bool, salt: str, results: str) -> float:
    """Seconds from the first submit to the last result of ``n`` mapped no-op tasks."""
    start = time.perf_counter()
    if persisted:
        futures = noop_persisted.with_options(result_storage=Path(results)).map(range(n), salt=salt)
    else:
        futures = noop.map(range(n))
    for future in futures:
        future.result()
    return time.perf_counter() - start


@flow(name="bench-empty")
def empty_flow() -> int:
    return 0


# ---------------------------------------------------------------------------------- child side
def _child(sizes: list[int], repeat: int) -> dict[str, Any]:
    results_dir = tempfile.mkdtemp(prefix="bench-results-")
    t0 = time.perf_counter()
    empty_flow()
    first = time.perf_counter() - t0
    t1 = time.perf_counter()
    empty_flow()
    second = time.perf_counter() - t1
    maps: dict[str, dict[int, float]] = {"plain": {}, "persisted": {}}
    for kind in maps:
        for n in sizes:
            samples = []
            for r in range(repeat):
                # A fresh salt: every persisted task really writes its result (no cache hits).
                samples.append(fanout_flow(n, kind == "persisted", f"{time.time_ns()}-{r}", results_dir))
            maps[kind][n] = statistics.median(samples)
    shutil.rmtree(results_dir, ignore_errors=True)
    return {"first_flow_s": first, "second_flow_s": second, "map_s": maps}


def _run_child(env: dict[str, str], sizes: list[int], repeat: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", "--tasks", ",".join(map(str, sizes)), "--repeat", str(repeat)]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600, cwd=PROJECT_ROOT)
    if result.returncode != 0:
        raise RuntimeError(f"child failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _report_map(label: str, data: dict[str, Any]) -> None:
    print(f"\n[{label}] first flow call {data['first_flow_s']:.2f} s, second {data['second_flow_s']:.2f} s")
    for kind, by_n in data["map_s"].items():
        sizes = sorted(int(n) for n in by_n)
        cells = ", ".join(f"N={n}: {by_n[str(n)] if str(n) in by_n else by_n[n]:.2f} s" for n in sizes)
        lo, hi = sizes[0], sizes[-1]
        t_lo = by_n.get(str(lo), by_n.get(lo))
        t_hi = by_n.get(str(hi), by_n.get(hi))
        slope_ms = (t_hi - t_lo) / (hi - lo) * 1000 if hi > lo else float("nan")
        print(f"  {kind:9s} map: {cells}; per task ≈ {slope_ms:.1f} ms")


# ---------------------------------------------------------------------------------- server + worker
def _start_server(base: Path) -> tuple[subprocess.Popen[bytes], dict[str, str], float]:
    port = free_port()
    env = server_env(port=port, home=base / "home")
    env["PREFECT_LOCAL_STORAGE_PATH"] = str(base / "home" / "storage")
    t0 = time.perf_counter()
    proc = start_prefect_process(
        ["server", "start", "--host", LOOPBACK, "--port", str(port), "--analytics-off"],
        env=env,
        log_path=base / "server.log",
    )
    wait_healthy(api_url(port), timeout_s=300, proc=proc)
    return proc, env, time.perf_counter() - t0


def _wait_running(client: Any, flow_run_id: Any, timeout_s: float = 300) -> datetime:
    """Poll (every 0.2 s) until the run has a start time; return it (server clock)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = client.read_flow_run(flow_run_id)
        if run.start_time is not None:
            return run.start_time
        time.sleep(0.2)
    raise TimeoutError(f"flow run {flow_run_id} did not start within {timeout_s} s")


def _bench_worker(env: dict[str, str], base: Path, poll_s: float, runs: int) -> dict[str, Any]:
    from prefect.client.orchestration import SyncPrefectClient
    from prefect.states import Scheduled

    pool = "bench-process"
    yaml_path = base / "bench-prefect.yaml"
    yaml_path.write_text(
        "name: bench\nprefect-version: 3.9.1\nbuild: null\npush: null\n"
        f"pull:\n  - prefect.deployments.steps.set_working_directory:\n      directory: {PROJECT_ROOT}\n"
        "deployments:\n  - name: empty\n    entrypoint: bench/fanout.py:empty_flow\n"
        f"    work_pool: {{name: {pool}}}\n",
        encoding="utf-8",
    )
    with SyncPrefectClient(api=env["PREFECT_API_URL"]) as client:
        ensure_work_pool(client, pool)
    subprocess.run(
        prefect_command("--no-prompt", "deploy", "--prefect-file", str(yaml_path), "--name", "empty"),
        env=env,
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
    )
    worker_env = dict(env, PREFECT_WORKER_QUERY_SECONDS=str(poll_s))
    worker = start_prefect_process(
        ["worker", "start", "--pool", pool, "--type", "process"],
        env=worker_env,
        log_path=base / "worker.log",
        cwd=PROJECT_ROOT,
    )
    manual: list[float] = []
    scheduled: list[float] = []
    try:
        with SyncPrefectClient(api=env["PREFECT_API_URL"]) as client:
            deployment = client.read_deployment_by_name("bench-empty/empty")
            # Warm-up: the worker's first poll and the first flow-run process pay imports.
            warm = client.create_flow_run_from_deployment(deployment.id)
            _wait_running(client, warm.id)
            for _ in range(runs):
                created = datetime.now(UTC)
                run = client.create_flow_run_from_deployment(deployment.id)
                manual.append((_wait_running(client, run.id) - created).total_seconds())
                at = datetime.now(UTC) + timedelta(seconds=2 * poll_s)
                run = client.create_flow_run_from_deployment(
                    deployment.id, state=Scheduled(scheduled_time=at)
                )
                scheduled.append((_wait_running(client, run.id) - at).total_seconds())
    finally:
        stop_process(worker, signals=(15, 15), grace_s=30)
    return {"poll_s": poll_s, "manual_s": manual, "scheduled_s": scheduled}


# ---------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", action="append", choices=["ephemeral", "server", "worker"])
    parser.add_argument("--tasks", default="10,100,300", help="comma-separated map sizes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--poll", type=float, default=10.0, help="worker polling interval (s)")
    parser.add_argument("--runs", type=int, default=3, help="manual/scheduled runs for the worker bench")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.tasks.split(","))
    if args.child:
        print(json.dumps(_child(sizes, args.repeat)))
        return

    only = set(args.only or ["ephemeral", "server", "worker"])
    print(
        f"machine: {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}; map sizes {sizes}, median of {args.repeat}"
    )
    base = Path(tempfile.mkdtemp(prefix="bench-fanout-"))
    try:
        if "ephemeral" in only:
            env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
            env.update(telemetry_off_env(), PREFECT_HOME=str(base / "eph-home"))
            _report_map(
                "ephemeral (temporary API started by the client)", _run_child(env, sizes, args.repeat)
            )
        if only & {"server", "worker"}:
            server, env, startup = _start_server(base)
            print(f"\n[server] `prefect server start` healthy after {startup:.1f} s")
            try:
                if "server" in only:
                    _report_map("server (PREFECT_API_URL on 127.0.0.1)", _run_child(env, sizes, args.repeat))
                if "worker" in only:
                    data = _bench_worker(env, base, args.poll, args.runs)
                    m, s = data["manual_s"], data["scheduled_s"]
                    print(f"\n[worker] polling every {data['poll_s']:.0f} s, {len(m)} run(s) each")
                    print(
                        f"  manual    created → running: {', '.join(f'{x:.1f}' for x in m)} s (median {statistics.median(m):.1f})"
                    )
                    print(
                        f"  scheduled due → running:     {', '.join(f'{x:.1f}' for x in s)} s (median {statistics.median(s):.1f})"
                    )
                    verdict = max(s) <= max(m) + data["poll_s"]
                    print(f"  scheduled ≤ manual + polling interval: {'yes' if verdict else 'NO'}")
            finally:
                stop_process(server)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
