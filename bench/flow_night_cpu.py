"""A flow night's client CPU inside one process, as the test suite runs nights (issue 40, suite item).

Usage (figures in docs/benchmarks.md, « A flow night's client CPU »):

    .venv/bin/python bench/flow_night_cpu.py                       # 5 samples of each night
    .venv/bin/python bench/flow_night_cpu.py --samples 9 --only offline-first
    .venv/bin/python bench/flow_night_cpu.py --profile offline-first --top 40

The session's Prefect API is Prefect's test harness with the settings tests/conftest.py gives it
(event persister, triggers and task run recorder off; this process sends no event), so the figures
are what a flow test costs its pytest process. One warm-up night of every kind first (imports,
bytecode, the tree caches); then each sample is a night of each kind in turn (alternated, so a
change of load falls on every kind alike), CPU of this process only (``time.process_time``: the
API's subprocess is not counted). Nights:

- ``offline-first``: the bundled corpus copied to a new folder, a new warehouse, the offline engine;
- ``offline-again``: the same corpus and warehouse once more (nothing changed: the night is reused);
- ``scripted-first``: testkit.flowkit's corpus with its scripted responder (tests/test_flow.py's night);
- ``gemini-first``: the bundled corpus through the real google-genai SDK against the fake server
  (bench/month.py's responder).

Prints each kind's median, min and max over the samples, with the load average.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from month import CORPUS, PROJECT_ROOT, _prepare_env, month_responder

KINDS = ("offline-first", "offline-again", "scripted-first", "gemini-first")
# tests/conftest.py's session server: no service reads events, no task run is kept.
HARNESS_ENV = {
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED": "false",
}


@contextmanager
def _harness() -> Iterator[None]:
    from prefect.events.clients import NullEventsClient
    from prefect.events.worker import EventsWorker
    from prefect.testing.utilities import prefect_test_harness

    os.environ.update(HARNESS_ENV)
    with prefect_test_harness(server_startup_timeout=300):
        EventsWorker.set_client_override(NullEventsClient)
        try:
            yield
        finally:
            EventsWorker.set_client_override(None)


class Nights:
    """Each kind of night as a function of a fresh folder; the fake Gemini server for the whole bench."""

    def __init__(self, tmp: Path, stack: ExitStack) -> None:
        from testkit.fake_gemini import FakeGemini

        self.tmp, self.count = tmp, 0
        self.fake = stack.enter_context(FakeGemini())
        self.fake.responder = month_responder()
        self.again: tuple[Path, Path] | None = None

    def _fresh(self) -> Path:
        self.count += 1
        folder = self.tmp / f"n{self.count}"
        folder.mkdir()
        return folder

    def _bundled(self, folder: Path) -> Path:
        corpus = folder / "corpus"
        shutil.copytree(CORPUS, corpus, ignore=shutil.ignore_patterns("sources.toml", ".collect-state.json"))
        return corpus

    def run(self, kind: str) -> Callable[[], Any]:
        """A function running one night of ``kind`` (its folders prepared outside the measure)."""
        from veille.flows.veille import veille_flow

        if kind == "offline-again" and self.again is not None:
            corpus, warehouse = self.again
            return lambda: veille_flow(
                corpus=str(corpus), backend="offline", warehouse=str(warehouse), return_state=True
            )
        folder = self._fresh()
        warehouse = folder / "warehouse"
        if kind in ("offline-first", "offline-again"):
            corpus = self._bundled(folder)
            self.again = (corpus, warehouse)
            return lambda: veille_flow(
                corpus=str(corpus), backend="offline", warehouse=str(warehouse), return_state=True
            )
        if kind == "gemini-first":
            corpus = self._bundled(folder)

            def gemini() -> Any:
                saved = dict(os.environ)
                os.environ.update(
                    {
                        "GEMINI_API_KEY": "bench-fake-key",
                        "VEILLE_GEMINI_BASE_URL": self.fake.base_url,
                        "VEILLE_GEMINI_API_VERSION": "v1beta",
                    }
                )
                try:
                    return veille_flow(
                        corpus=str(corpus), backend="gemini", warehouse=str(warehouse), return_state=True
                    )
                finally:
                    os.environ.clear()
                    os.environ.update(saved)

            return gemini
        from testkit.flowkit import responder, write_corpus
        from testkit.scripted import ScriptedModel, night_on

        corpus = write_corpus(folder / "corpus")

        def scripted() -> Any:
            with night_on(ScriptedModel(function=responder())):
                return veille_flow(corpus=str(corpus), warehouse=str(warehouse), return_state=True)

        return scripted


def _profile_every_thread() -> list[cProfile.Profile]:
    """A CPU profile (each thread's own CPU time, not its waits) of this thread and of every thread
    started from now on (the task runner's, the model client's loop): their profiles, this one first."""
    profiles = [cProfile.Profile(time.thread_time)]

    def start(*_: Any) -> None:
        sys.setprofile(None)
        profile = cProfile.Profile(time.thread_time)
        profiles.append(profile)
        profile.enable()

    threading.setprofile(start)
    profiles[0].enable()
    return profiles


def _check(kind: str, state: Any) -> None:
    if not state.is_completed():
        raise SystemExit(f"{kind}: the night ended {state.type.value}: {state.message}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--only", choices=KINDS, action="append", help="only these kinds of night")
    parser.add_argument("--profile", choices=KINDS, help="one more night of this kind under cProfile")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--profile-out", type=Path, help="also keep the profile in this file")
    args = parser.parse_args()
    kinds = args.only or list(KINDS)
    if "offline-again" in kinds and "offline-first" not in kinds:
        kinds.insert(kinds.index("offline-again"), "offline-first")  # its corpus and warehouse
    tmp = Path(tempfile.mkdtemp(prefix="veille-night-cpu-"))
    _prepare_env(tmp / "prefect-home")
    sys.path.insert(0, str(PROJECT_ROOT))
    print(f"command: {' '.join(sys.argv)}")
    try:
        with ExitStack() as stack:
            stack.enter_context(_harness())
            nights = Nights(tmp, stack)
            for kind in kinds:  # warm-up: imports, bytecode, tree caches
                _check(kind, nights.run(kind)())
            cpu: dict[str, list[float]] = {kind: [] for kind in kinds}
            wall: dict[str, list[float]] = {kind: [] for kind in kinds}
            main_thread: dict[str, list[float]] = {kind: [] for kind in kinds}
            loads = []
            for _ in range(args.samples):
                loads.append(os.getloadavg()[0])
                for kind in kinds:
                    night = nights.run(kind)
                    c0, w0, t0 = time.process_time(), time.perf_counter(), time.thread_time()
                    state = night()
                    cpu[kind].append(time.process_time() - c0)
                    main_thread[kind].append(time.thread_time() - t0)
                    wall[kind].append(time.perf_counter() - w0)
                    _check(kind, state)
            print(f"{args.samples} samples; {os.cpu_count()} CPU(s), load {min(loads):.1f}-{max(loads):.1f}")
            for kind in kinds:
                c = cpu[kind]
                print(
                    f"{kind:15s} CPU median {statistics.median(c):.3f} s (min {min(c):.3f}, max {max(c):.3f}); "
                    f"main thread {statistics.median(main_thread[kind]):.3f} s; "
                    f"wall median {statistics.median(wall[kind]):.3f} s"
                )
            if args.profile:
                night = nights.run(args.profile)
                profiles = _profile_every_thread()
                _check(args.profile, night())
                threading.setprofile(None)  # type: ignore[arg-type]
                profiles[0].disable()
                out = tmp / "night.prof"
                stats = pstats.Stats(*profiles)  # type: ignore[arg-type]
                stats.dump_stats(out)
                stats.sort_stats("cumulative").print_stats(args.top)
                stats.sort_stats("tottime").print_stats(args.top)
                if args.profile_out:  # for snakeviz or pstats later
                    shutil.copy(out, args.profile_out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
