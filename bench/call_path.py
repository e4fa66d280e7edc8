"""The model call path, measured: veille's functions from a role's entry to the provider's generate.

Usage (the figure docs/architecture.md states, « The model seam »):

    .venv/bin/python bench/call_path.py            # the run's client (planner, analysts, researcher)
    .venv/bin/python bench/call_path.py --cached   # also the cached asker (writer, critic, reviser,
                                                   # judge): starts a temporary Prefect API

One role call on a recording provider (testkit/callpath.py) that reads the stacks when its
``generate`` is called: the caller's thread (blocked in the client) and the client's loop thread.
Only frames of ``veille`` modules count; Prefect's task engine, asyncio and the standard library
do not. Exit status 1 when a path is longer than ``--max`` (5, issue 38 item 5).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT_ROOT))  # testkit/ is not an installed package

from testkit.callpath import measure  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cached", action="store_true", help="also the cached asker (Prefect API)")
    parser.add_argument("--max", type=int, default=5, help="longest path accepted (exit 1 past it)")
    args = parser.parse_args(argv)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # no telemetry from the temp API
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")  # a task outside a flow
    paths = {"run's client": measure("run")}
    if args.cached:
        from prefect.testing.utilities import prefect_test_harness

        with prefect_test_harness(server_startup_timeout=120):
            paths["cached asker"] = measure("cached")
    worst = 0
    for label, path in paths.items():
        print(f"{label}: {path.count} functions")
        print(path.render())
        worst = max(worst, path.count)
    return 0 if worst <= args.max else 1


if __name__ == "__main__":
    sys.exit(main())
