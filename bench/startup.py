"""Start-up of `veille run` (issue 15 item 8): wall and CPU time of the whole command, side by side.

Usage (figures in docs/operations.md, "Start-up"):

    .venv/bin/python bench/startup.py --repeat 2

Variants, run interleaved (A B C A B C …) so a change of machine load hits each alike; every run is
`veille run --backend offline` on the small test corpus, fresh warehouse, a warm PREFECT_HOME per
variant (migrated by one run first):

- ``shared``: no PREFECT_API_URL, the default ``VEILLE_PREFECT_SERVER=shared``: the background API
  started by an earlier run answers (what `make run` does when run again);
- ``shared-cold``: the same once the shared API has stopped (`veille shared-api --stop` before the
  run, as after its idle timeout): this run starts it;
- ``temporary``: ``VEILLE_PREFECT_SERVER=temporary``, Prefect's temporary API started and stopped by
  the run (what `make run` did before);
- ``temporary-trimmed``: the same with the temporary server's optional work off (automation
  triggers, event persistence, block registration, analytics);
- ``server``: against a `prefect server start` on 127.0.0.1 started once by this script (what
  "use a running local server" gives).

CPU time is user + system of the command and its children (the temporary server included), from
``resource.getrusage(RUSAGE_CHILDREN)`` around each run. A first run on a fresh PREFECT_HOME
(database migration) is measured once for ``shared`` and ``temporary``. The shared keeper is a
detached process, so its CPU time is not in the figure; its server's start is in the wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testkit.flowkit import write_corpus
from veille.ops import server as ops_server

TRIM = {
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
    "PREFECT_API_BLOCKS_REGISTER_ON_START": "false",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
}


def _env(home: Path, warehouse: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VEILLE_", "PREFECT_"))}
    env.pop("GEMINI_API_KEY", None)
    env.pop("GOOGLE_API_KEY", None)
    env.update(
        PREFECT_HOME=str(home),
        VEILLE_WAREHOUSE_DIR=str(warehouse),
        DO_NOT_TRACK="1",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="600",
    )
    return env


def _variant_env(variant: str, home: Path, warehouse: Path, server_url: str | None) -> dict[str, str]:
    env = _env(home, warehouse)
    if variant.startswith("temporary"):
        env["VEILLE_PREFECT_SERVER"] = "temporary"
    if variant == "temporary-trimmed":
        env.update(TRIM)
    if variant == "server" and server_url is not None:
        env["PREFECT_API_URL"] = server_url
    return env


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-first", action="store_true", help="skip the fresh-PREFECT_HOME runs")
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("veille"))
    with tempfile.TemporaryDirectory(prefix="veille-startup-") as tmp:
        base = Path(tmp)
        corpus = write_corpus(base / "corpus")
        run = [exe, "run", "--corpus", str(corpus), "--backend", "offline"]
        results: dict[str, list[tuple[float, float]]] = {}
        print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}", flush=True)
        print(f"load average before: {os.getloadavg()}", flush=True)
        stop = [exe, "shared-api", "--stop"]
        firsts = () if args.no_first else ("shared", "temporary")
        for variant in firsts:
            home = base / f"home-first-{variant}"
            env = _variant_env(variant, home, base / f"wh-first-{variant}", None)
            wall, cpu = _timed(run, env)
            print(f"first run, fresh PREFECT_HOME, {variant}: wall {wall:.1f} s, CPU {cpu:.1f} s", flush=True)
            _timed(stop, env)
            shutil.rmtree(home, ignore_errors=True)
        port = ops_server.free_port()
        server_home = base / "server-home"
        server_env = ops_server.server_env(port=port, home=server_home)
        server = ops_server.start_prefect_process(
            ["server", "start", "--host", ops_server.LOOPBACK, "--port", str(port), "--analytics-off"],
            env=server_env,
            log_path=base / "server.log",
        )
        try:
            ops_server.wait_healthy(ops_server.api_url(port), timeout_s=600, proc=server)
            variants = ("shared", "shared-cold", "temporary", "temporary-trimmed", "server")
            url = ops_server.api_url(port)
            for variant in variants:  # warms each PREFECT_HOME (migrated once)
                _timed(run, _variant_env(variant, base / f"home-{variant}", base / f"wh-warm-{variant}", url))
            for i in range(args.repeat):
                for variant in variants:
                    env = _variant_env(variant, base / f"home-{variant}", base / f"wh-{variant}-{i}", url)
                    if variant == "shared-cold":
                        _timed(stop, env)
                    wall, cpu = _timed(run, env)
                    results.setdefault(variant, []).append((wall, cpu))
                    print(f"run {i + 1}, {variant}: wall {wall:.1f} s, CPU {cpu:.1f} s", flush=True)
        finally:
            for variant in ("shared", "shared-cold"):
                subprocess.run(
                    stop, env=_env(base / f"home-{variant}", base), capture_output=True, check=False
                )
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        print(f"load average after: {os.getloadavg()}")
        ref = statistics.median(w for w, _ in results["temporary"])
        print("| variant | wall (median) | CPU (median) | wall / temporary |")
        for variant, samples in results.items():
            wall = statistics.median(w for w, _ in samples)
            cpu = statistics.median(c for _, c in samples)
            print(f"| {variant} | {wall:.1f} s | {cpu:.1f} s | {wall / ref:.2f} |")


if __name__ == "__main__":
    main()
