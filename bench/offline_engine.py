"""CPU time of the offline engine on the bundled corpus, role by role.

Usage (figures recorded in docs/offline-engine.md):

    .venv/bin/python bench/offline_engine.py [--corpus corpus] [--repeat 5]

Runs the whole role chain the flow runs (planner, one analyst per sub-task, writer, then
critic -> arbiter -> reviser until the arbiter validates, at most 3 rounds) with the library's own
functions over a ModelClient on the offline engine (``testkit.offline_pipeline.run_bundled_pipeline``,
no Prefect), and prints the CPU time (``time.process_time``) spent inside ``FunctionModel.respond`` (the engine behind the seam) per
role and in all — ingestion, DuckDB reads and the client are outside the timed part: best of
``--repeat`` runs, then the number of review rounds and the verdict.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testkit.offline_pipeline import run_bundled_pipeline  # noqa: E402
from veille.models.base import ModelRequest, RawResponse  # noqa: E402
from veille.models.function import FunctionModel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpus")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    cpu: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    original = FunctionModel.respond

    def timed(self: FunctionModel, request: ModelRequest) -> RawResponse:
        start = time.process_time()
        raw = original(self, request)
        cpu[request.role] += time.process_time() - start
        calls[request.role] += 1
        return raw

    FunctionModel.respond = timed  # type: ignore[method-assign]
    best_total = float("inf")
    best: dict[str, float] = {}
    out: dict[str, object] = {}
    for _ in range(args.repeat):
        cpu.clear()
        calls.clear()
        start = time.process_time()
        out = run_bundled_pipeline(args.corpus)
        total = time.process_time() - start
        if total < best_total:
            best_total, best = total, dict(cpu)
    FunctionModel.respond = original  # type: ignore[method-assign]

    rounds = out["rounds"]
    assert isinstance(rounds, list)
    print(f"corpus: {args.corpus}  (best of {args.repeat} runs, CPU seconds)")
    print(f"{'role':<10}{'calls':>6}{'cpu s':>10}")
    for role in ("planner", "analyst", "writer", "critic", "reviser"):
        if role in calls:
            print(f"{role:<10}{calls[role]:>6}{best.get(role, 0.0):>10.3f}")
    print(f"{'total':<10}{'':>6}{best_total:>10.3f}   (includes reading the corpus files)")
    print(f"rounds: {len(rounds)}, validated: {rounds[-1]['valid'] if rounds else None}")


if __name__ == "__main__":
    main()
