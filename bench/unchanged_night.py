"""An unchanged night at real size (issue 40 item 4): first night, then the same corpus again.

Usage (figures in docs/benchmarks.md, « An unchanged night at 2,000 real-size documents »):

    .venv/bin/python bench/unchanged_night.py                       # 2,000 documents, 1 unchanged night
    .venv/bin/python bench/unchanged_night.py --size 200 --nights 2
    .venv/bin/python bench/unchanged_night.py --profile 20          # + a cProfile top-20 of one more night
    .venv/bin/python bench/unchanged_night.py --nights 3 --phases 3  # + 3 nights timed phase by phase

The corpus is the bundled one (request, 40 documents, reference) plus ``--size`` real-size documents
(~20 KB of real prose each, mixed formats and id styles: bench/ingest_realsize.py's generator), in a
temporary folder with a fresh warehouse. Each night is ``veille run --backend offline`` in its own
process, as the nightly deployment runs it; the shared Prefect API answers (started by the first run
when it is not up). Per night: wall time, CPU time of the command and its children (user + system,
``RUSAGE_CHILDREN``), the load average before it, and the share of the first night. ``--profile N``
runs one more unchanged night under cProfile and prints its N heaviest functions by cumulative time.
``--phases N`` runs N more unchanged nights through bench/night_phases.py and prints, for each, the
wall and CPU time of its phases (imports, the flow run's start, the flow's body, the flow run's end,
the rest): where the wall time of the process goes, besides its total.
"""

from __future__ import annotations

import argparse
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from ingest_realsize import generate  # noqa: E402  (a sibling script, not a package)

PYTHON = str(ROOT / ".venv" / "bin" / "python")
VEILLE = str(ROOT / ".venv" / "bin" / "veille")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build_corpus(folder: Path, size: int) -> Path:
    corpus = folder / "corpus"
    shutil.copytree(ROOT / "corpus", corpus)
    extra = folder / "generated"
    generate(extra, size)
    shutil.move(str(extra / "docs"), str(corpus / "docs" / "bench"))
    return corpus


def night(
    corpus: Path, warehouse: Path, profile: Path | None = None, phases: list[str] | None = None
) -> dict[str, float]:
    """One ``veille run``; with ``phases`` (a list), run through bench/night_phases.py and append its line."""
    command = [
        PYTHON,
        str(ROOT / "bench" / "night_phases.py") if phases is not None else VEILLE,
        "run",
        "--backend",
        "offline",
        "--corpus",
        str(corpus),
        "--warehouse",
        str(warehouse),
    ]
    if profile is not None:
        command[1:1] = ["-m", "cProfile", "-o", str(profile)]
    load = os.getloadavg()[0]
    cpu, wall = _children_cpu(), time.perf_counter()
    # Bytecode written and read, as `make run` runs every night (Makefile: `unexport
    # PYTHONDONTWRITEBYTECODE`): with it set in the environment, each night compiled every module it
    # imports from source (2.2 profiled s of an unchanged night), which no deployment does.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    figures = {"wall_s": time.perf_counter() - wall, "cpu_s": _children_cpu() - cpu, "load": load}
    if phases is not None:
        phases += [line for line in done.stderr.splitlines() if line.startswith("phases: ")]
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-4000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"night failed ({done.returncode}): {' '.join(command)}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=2000, help="generated real-size documents added")
    parser.add_argument("--nights", type=int, default=1, help="unchanged nights after the first")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="cProfile top-N of one more night"
    )
    parser.add_argument(
        "--phases", type=int, default=0, metavar="N", help="N more nights timed phase by phase"
    )
    parser.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    args = parser.parse_args()

    folder = args.keep or Path(tempfile.mkdtemp(prefix="veille-unchanged-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"command: {' '.join(sys.argv)}  (folder {folder})")
    try:
        corpus = build_corpus(folder, args.size)
        warehouse = folder / "warehouse"
        first = night(corpus, warehouse)
        print(
            f"night 1 (first, {args.size} + 40 documents): {first['wall_s']:.1f} s wall, "
            f"{first['cpu_s']:.1f} s CPU, load {first['load']:.1f}"
        )
        for n in range(args.nights):
            again = night(corpus, warehouse)
            print(
                f"night {n + 2} (unchanged): {again['wall_s']:.1f} s wall, {again['cpu_s']:.1f} s CPU, "
                f"load {again['load']:.1f}; {100 * again['wall_s'] / first['wall_s']:.1f} % of the first "
                f"night's wall time, {100 * again['cpu_s'] / first['cpu_s']:.1f} % of its CPU (goal ≤ 10 %)"
            )
        for n in range(args.phases):
            lines: list[str] = []
            again = night(corpus, warehouse, phases=lines)
            print(
                f"night (unchanged, phases {n + 1}): {again['wall_s']:.1f} s wall, {again['cpu_s']:.1f} s CPU, "
                f"load {again['load']:.1f}; {100 * again['wall_s'] / first['wall_s']:.1f} % of the first "
                f"night's wall time"
            )
            print("\n".join(f"  {line}" for line in lines))
        if args.profile:
            out = folder / "unchanged.prof"
            figures = night(corpus, warehouse, profile=out)
            print(
                f"profiled unchanged night: {figures['wall_s']:.1f} s wall under cProfile; top {args.profile}:"
            )
            stats = pstats.Stats(str(out)).sort_stats("cumulative")
            stats.print_stats(args.profile)
            print(f"the same, veille's own functions only (top {args.profile}):")
            stats.print_stats(f"{ROOT.name}/veille/", args.profile)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
