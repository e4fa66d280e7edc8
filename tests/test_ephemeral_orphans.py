"""No orphaned temporary server: Prefect's temporary API dies with the `veille run` that started it.

Prefect stops that server from ``atexit``, which a SIGKILL skips; veille starts it with a Linux
parent-death signal (``veille/ops/ephemeral.py``). Loopback only; every process started here is killed
by its process group at the end of its trial.
"""

from __future__ import annotations

import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Queue
from typing import Any

import pytest

from testkit.flowkit import write_corpus
from tests.crashkit import Zygote
from veille.ops import ephemeral

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux only")

SERVER_LINE = re.compile(r"Starting temporary server on http://127\.0\.0\.1:(\d+)")


def test_the_command_is_prefects_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """veille re-issues Prefect's uvicorn command (plus preexec_fn): it must not drift from it."""
    from prefect.server.api import server as prefect_server

    seen: dict[str, Any] = {}

    def fake_popen(*args: Any, **kwargs: Any) -> None:
        seen.update(kwargs, args=kwargs.get("args", args[0] if args else None))

    monkeypatch.setattr(prefect_server.subprocess, "Popen", fake_popen)
    instance = prefect_server.SubprocessASGIServer(port=8765)
    try:
        instance._run_uvicorn_command()
    finally:
        instance.stop()
    assert seen["args"] == ephemeral.uvicorn_args(8765)
    for key in ("PREFECT_UI_ENABLED", "PREFECT__SERVER_EPHEMERAL", "PREFECT__SERVER_FINAL"):
        assert key in seen["env"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"  # a zombie waits for its reaper; it holds no socket


def _group(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _text(path: Path) -> str:
    """The run's stderr so far ("" before the forked child has opened it)."""
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_parent_death_signal_kills_the_child(tmp_path: Path) -> None:
    """The mechanism alone: a parent SIGKILLed right after starting a child with dies_with_parent."""
    code = (
        "import subprocess, sys; from veille.ops.ephemeral import dies_with_parent; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], preexec_fn=dies_with_parent()); "
        "print(p.pid, flush=True); import time; time.sleep(120)"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.kill()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the child outlived its parent"
    finally:
        for pid in _group(parent.pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_sigkill_of_veille_run_at_random_moments_leaves_no_server(tmp_path: Path) -> None:
    """Each trial is a real `veille run` process (forked from a pre-imported zygote, tests/crashkit.py,
    so the 20 trials do not each pay Prefect's import) that starts its own temporary server and gets
    a real SIGKILL; the server and everything else in the run's process group must be gone."""
    corpus = write_corpus(tmp_path / "corpus")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VEILLE_", "PREFECT_"))}
    env.pop("GEMINI_API_KEY", None)
    env.pop("GOOGLE_API_KEY", None)
    env.update(
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        DO_NOT_TRACK="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="300",
        # The temporary API must die with its run; the shared one outlives runs by design (its
        # own kill test: tests/test_shared_api.py).
        VEILLE_PREFECT_SERVER="temporary",
    )
    rng = random.Random(15)
    # Half the kills once the server is announced (plus 0-4 s), half anywhere in 0.3-15 s.
    delays = [rng.uniform(0, 4) if trial % 2 == 0 else rng.uniform(0.3, 15) for trial in range(20)]
    lanes = 3  # three runs at a time: each mostly waits (its kill delay), and 20 in a row took ~4 min
    # One zygote per lane (a zygote runs one child at a time). Prefect reads PREFECT_* at import, so
    # they are the zygote's environment; the child runs `veille.cli.main` as the `veille` script does.
    # Every trial's run imports Prefect's server module before it starts its temporary API (the
    # client's SubprocessASGIServer lives there, veille/ops/ephemeral.py): ~1.3 s of CPU a trial,
    # paid once per lane here instead. It starts no thread (the zygote asserts it); the server
    # process itself is still a fresh interpreter, started, announced and killed as before.
    zygotes: Queue[Zygote] = Queue()
    try:
        for lane in range(lanes):
            zygotes.put(Zygote(env, tmp_path / f"lane-{lane}", preload=("prefect.server.api.server",)))

        def one_kill(trial: int) -> tuple[str, int | None, list[int], bool]:
            after_server, delay = trial % 2 == 0, delays[trial]
            zygote = zygotes.get()
            try:
                pid = zygote.start(
                    ["run", "--corpus", str(corpus), "--backend", "offline"],
                    env={"VEILLE_WAREHOUSE_DIR": str(tmp_path / f"warehouse-{trial}")},
                    new_session=True,  # its own process group: what it starts is found by pgid
                )
                err_path = zygote.err_path
                try:
                    deadline = time.monotonic() + 240
                    while (
                        after_server
                        and not SERVER_LINE.search(_text(err_path))
                        and time.monotonic() < deadline
                    ):
                        if not _alive(pid):
                            break
                        time.sleep(0.05)
                    time.sleep(delay)
                    zygote.kill_current()
                    zygote.wait(timeout_s=60)
                    match = SERVER_LINE.search(_text(err_path))
                    port = int(match.group(1)) if match else None
                    gone_by = time.monotonic() + 10
                    while (
                        _group(pid) or (port is not None and _listening(port))
                    ) and time.monotonic() < gone_by:
                        time.sleep(0.2)
                    label = f"{trial}: kill at {'server+' if after_server else ''}{delay:.1f}s, port {port}"
                    return label, port, _group(pid), port is not None and _listening(port)
                finally:
                    for leftover in _group(pid):
                        os.kill(leftover, signal.SIGKILL)
            finally:
                zygotes.put(zygote)

        with ThreadPoolExecutor(max_workers=lanes) as pool:
            outcomes = list(pool.map(one_kill, range(20)))
    finally:
        while not zygotes.empty():
            zygotes.get().close()
    trials = [label for label, *_ in outcomes]
    for label, _port, left, listening in outcomes:
        assert not left and not listening, (label, left, listening)
    servers_seen = sum(port is not None for _, port, _, _ in outcomes)
    assert servers_seen >= 10, trials  # most kills hit a started server
