"""Start-up of `veille run` (issue 15 item 8): wall and CPU time of the whole command, side by side.

Usage (figures in docs/operations.md, "Start-up"):

    .venv/bin/python bench/startup.py --repeat 2

Variants, run interleaved (A B C A B C …) so a change of machine load hits each alike; every run is
`veille run --backend offline` on the small test corpus, fresh warehouse, shared warm PREFECT_HOME:

- ``temporary``: no PREFECT_API_URL, Prefect's temporary API (what `make run` does today);
- ``temporary-trimmed``: the same with the temporary server's optional work off (automation
  triggers, event persistence, block registration, analytics);
- ``server``: against a `prefect server start` on 127.0.0.1 started once by this script (what
  "use a running local server" or a shared background server gives).

CPU time is user + system of the command and its children (the temporary server included), from
``resource.getrusage(RUSAGE_CHILDREN)`` around each run. A first run on a fresh PREFECT_HOME
(database migration) is measured once per temporary variant.
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

from tests.flowkit import write_corpus
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
        print(f"load average before: {os.getloadavg()}", flush=True)
        firsts = () if args.no_first else (("temporary", {}), ("temporary-trimmed", TRIM))
        for variant, extra in firsts:
            home = base / f"home-first-{variant}"
            wall, cpu = _timed(run, {**_env(home, base / f"wh-first-{variant}"), **extra})
            print(f"first run, fresh PREFECT_HOME, {variant}: wall {wall:.1f} s, CPU {cpu:.1f} s", flush=True)
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
            home = base / "home-warm"
            _timed(run, _env(home, base / "wh-warmup"))  # warms PREFECT_HOME (migrated once)
            for i in range(args.repeat):
                for variant in ("temporary", "temporary-trimmed", "server"):
                    env = _env(home, base / f"wh-{variant}-{i}")
                    if variant == "temporary-trimmed":
                        env.update(TRIM)
                    if variant == "server":
                        env["PREFECT_API_URL"] = ops_server.api_url(port)
                    wall, cpu = _timed(run, env)
                    results.setdefault(variant, []).append((wall, cpu))
                    print(f"run {i + 1}, {variant}: wall {wall:.1f} s, CPU {cpu:.1f} s", flush=True)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        print(f"load average after: {os.getloadavg()}")
        ref = statistics.median(w for w, _ in results["temporary"])
        for variant, samples in results.items():
            wall = statistics.median(w for w, _ in samples)
            cpu = statistics.median(c for _, c in samples)
            print(f"| {variant} | {wall:.1f} s | {cpu:.1f} s | {wall / ref:.2f} |")


if __name__ == "__main__":
    main()
