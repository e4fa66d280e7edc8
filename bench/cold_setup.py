"""Cold set-up (issue 40 item 6): a fresh clone with empty package caches to its first dossier.

Usage (figures in docs/benchmarks.md, « Set-up: first dossier from a fresh clone »):

    python3 bench/cold_setup.py                      # clones this checkout's HEAD
    python3 bench/cold_setup.py --source /work/main --keep /tmp/bs

Runs with the machine's ``python3`` (the clone makes its own venv): ``git clone`` into a temporary
folder, then ``make run`` twice there with empty ``UV_CACHE_DIR`` and ``PIP_CACHE_DIR``, a fresh
``PREFECT_HOME`` and ``PYTHONDONTWRITEBYTECODE=1`` (as on this machine). Prints, with the command and
the load average before and after: each ``make run``'s wall and CPU time (user + system of make and
everything it waited for); the CPU of the shared Prefect API's keeper and server, detached so not in
make's figure (``/proc/<pid>/stat`` before ``veille shared-api --stop``); and where the first run's
wall time went, from the modification times the run leaves (venv and uv installed, install done,
the shared API leased, its server healthy, the first run folder written).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_HEALTHY_RE = re.compile(r"^(\S+) shared Prefect API on .* \(pid (\d+)\)", re.MULTILINE)
_PIDS_RE = re.compile(r"keeper pid (\d+), server pid (\d+)")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _make_run(clone: Path, env: dict[str, str], log: Path) -> tuple[float, float, float, float]:
    """(start, wall, CPU, load before) of one `make run` in ``clone``."""
    load, cpu, start = os.getloadavg()[0], _children_cpu(), time.time()
    with log.open("w") as out:
        done = subprocess.run(["make", "run"], cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"make run failed ({done.returncode}); see {log}")
    return start, time.time() - start, _children_cpu() - cpu, load


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _mtime(path: Path) -> float | None:
    return path.stat().st_mtime if path.exists() else None


def _phases(clone: Path, home: Path, start: float, end: float) -> list[tuple[str, float | None]]:
    """Moments of the first run, from the files it leaves (None: not found)."""
    api = next(home.glob("veille-shared-api/*/"), None)
    healthy = None
    if api is not None and (api / "veille-shared-api.log").is_file():
        found = _HEALTHY_RE.search((api / "veille-shared-api.log").read_text())
        healthy = datetime.fromisoformat(found.group(1)).timestamp() if found else None
    runs = sorted((clone / "warehouse" / "data" / "runs").glob("*/"))
    return [
        ("start", start),
        ("uv installed in the venv (venv + pip install uv)", _mtime(clone / ".venv" / "bin" / "uv")),
        ("install done (uv pip install)", _mtime(clone / ".venv" / ".installed")),
        (
            "shared API leased (veille run's CLI started)",
            _mtime(api / ".veille-shared-api.lease") if api else None,
        ),
        ("shared API healthy (server started, migrated)", healthy),
        ("first run folder's last write (report)", _mtime(runs[0]) if runs else None),
        ("first make run ends", end),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source", default=str(ROOT), help="what to clone (a path or URL)")
    parser.add_argument("--keep", type=Path, help="clone here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}", flush=True)
    print(f"load average before: {os.getloadavg()}, {os.cpu_count()} CPUs", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="veille-cold-"))
    clone = args.keep or scratch / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", args.source, str(clone)], check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True
    )
    home = scratch / "prefect-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VEILLE_", "PREFECT_"))}
    env.update(
        UV_CACHE_DIR=str(scratch / "uv-cache"),
        PIP_CACHE_DIR=str(scratch / "pip-cache"),
        PREFECT_HOME=str(home),
        PYTHONDONTWRITEBYTECODE="1",
    )
    print(f"clone of {args.source} at {commit.stdout.strip()} in {clone}", flush=True)
    veille = str(clone / ".venv" / "bin" / "veille")
    try:
        start, wall, cpu, load = _make_run(clone, env, clone / "run1.log")
        print(f"first make run: {wall:.1f} s wall, {cpu:.1f} s CPU (make + children), load {load:.1f}")
        shown = subprocess.run([veille, "shared-api"], env=env, capture_output=True, text=True).stdout
        pids = _PIDS_RE.search(shown)
        api_cpu = [_proc_cpu(int(p)) for p in pids.groups()] if pids else []
        if api_cpu:
            print(
                f"shared API keeper + server CPU: {api_cpu[0]:.1f} + {api_cpu[1]:.1f} s; in all "
                f"{cpu + sum(api_cpu):.1f} s of CPU for the first dossier"
            )
        moments = _phases(clone, home, start, start + wall)
        last = start
        for label, moment in moments[1:]:
            if moment is None:
                print(f"  {label}: not found")
                continue
            print(f"  {label}: +{moment - start:.1f} s (phase {moment - last:.1f} s)")
            last = moment
        _, wall2, cpu2, load2 = _make_run(clone, env, clone / "run2.log")
        print(f"second make run: {wall2:.1f} s wall, {cpu2:.1f} s CPU, load {load2:.1f}")
    finally:
        subprocess.run([veille, "shared-api", "--stop"], env=env, capture_output=True)
        print(f"load average after: {os.getloadavg()}")
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
