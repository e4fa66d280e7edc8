"""``veille ...`` with the wall and CPU time of each phase of the process, for bench/unchanged_night.py.

Usage: ``.venv/bin/python bench/night_phases.py run --backend offline --corpus C --warehouse W``;
the command's own output is unchanged, and one line goes to stderr at exit::

    phases: imports 1.10 s wall / 0.98 s CPU; flow run start 0.20 / 0.16; flow body 0.65 / 0.62; ...

Phases, in order: the imports (``veille.cli`` and the flow module, Prefect's import included), the
flow run's start (Prefect's engine: API round trips, settings, until the flow's body begins), the
flow's body (every task of the night), the flow run's end (from the body's end to the heartbeat
context's: what ``veille.ops.heartbeats`` removed), the rest (final state, summary, process exit).
CPU is the process's (every thread). The marks come from wrapping the heartbeat context Prefect enters
around the body (``prefect.flow_engine._send_heartbeats``), in this process only.
"""

from __future__ import annotations

import atexit
import itertools
import sys
import time
from typing import Any

T0_WALL, T0_CPU = time.perf_counter(), time.process_time()
MARKS: list[tuple[str, float, float]] = [("start", 0.0, 0.0)]


def mark(name: str) -> None:
    MARKS.append((name, time.perf_counter() - T0_WALL, time.process_time() - T0_CPU))


def report() -> None:
    mark("exit")
    parts = []
    for (_, wall0, cpu0), (name, wall1, cpu1) in itertools.pairwise(MARKS):
        parts.append(f"{name} {wall1 - wall0:.2f} s wall / {cpu1 - cpu0:.2f} s CPU")
    sys.stderr.write("phases: " + "; ".join(parts) + "\n")


class Marked:
    """The heartbeat context, marking when the flow's body begins and ends and when the context is left."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __enter__(self) -> Any:
        mark("flow run start")
        return self.inner.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        mark("flow body")
        try:
            return self.inner.__exit__(*exc)
        finally:
            mark("flow run end (heartbeat thread)")


def main() -> None:
    atexit.register(report)
    import prefect.flow_engine as flow_engine

    import veille.cli
    import veille.flows.veille  # here, so that its cost is the imports' phase

    mark("imports")
    installed = flow_engine._send_heartbeats  # veille's, once the flow module is imported

    def send_heartbeats(engine: Any, join_on_exit: bool = True) -> Marked:
        return Marked(installed(engine, join_on_exit=join_on_exit))

    flow_engine._send_heartbeats = send_heartbeats  # type: ignore[assignment]
    sys.argv = ["veille", *sys.argv[1:]]
    try:
        veille.cli.main()
    finally:
        mark("rest (final state, summary)")


if __name__ == "__main__":
    main()
