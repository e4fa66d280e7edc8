"""The shared background Prefect API (veille/ops/shared_api.py): one server for consecutive runs,
kept alive by its clients' leases, gone once idle — even when its clients were SIGKILLed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from veille.ops.checkout import SHARED_API_KIND, keyed_path
from veille.ops.shared_api import STATE_NAME, read_state

pytestmark = [pytest.mark.process, pytest.mark.slow, pytest.mark.timeout(600)]

PROJECT_ROOT = Path(__file__).resolve().parents[1]

# A client as `veille run` is one: lease, wait for the URL, print it, then live until killed.
CLIENT = """
import sys, time
from pathlib import Path
from veille.ops.shared_api import acquire_shared_api
api = acquire_shared_api(Path(sys.argv[1]), float(sys.argv[2]))
print(api.wait(300), flush=True)
time.sleep(600)
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VEILLE_", "PREFECT_"))}
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        VEILLE_PREFECT_SERVER="shared",
    )
    return env


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (not yet reaped) is gone for our purpose
        return "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False


def _start_client(home: Path, idle_s: float, **extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(home), str(idle_s)],
        env={**_env(home), **extra},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.poll() is not None else url
    return proc, url


def _wait_gone(pids: list[int], port: int, home: Path, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids) and not _listening(port) and not (home / STATE_NAME).exists():
            return
        time.sleep(0.2)
    raise AssertionError(
        f"still there after {within_s:.0f} s: pids {[p for p in pids if _alive(p)]}, "
        f"port {port} listening {_listening(port)}, state file {(home / STATE_NAME).exists()}"
    )


def test_clients_share_one_server_which_outlives_them_only_by_its_idle_time(tmp_path: Path) -> None:
    home, idle_s = tmp_path / "prefect-home", 3.0
    canary = "AIza-canary-shared-api-0123456789"
    first, url = _start_client(home, idle_s, GEMINI_API_KEY=canary)
    second = None
    try:
        state = read_state(home)
        assert state is not None and state.url == url
        for pid in (state.keeper_pid, state.server_pid):  # the model key stays with the run
            assert canary not in Path(f"/proc/{pid}/environ").read_text(errors="replace")
        second, url2 = _start_client(home, idle_s)
        assert url2 == url  # the second client found the first one's server
        assert read_state(home) == state  # and started no keeper of its own
        time.sleep(idle_s * 2)  # longer than the idle timeout, but leased all along
        assert _listening(state.port) and _alive(state.keeper_pid)
        # SIGKILL: no exit handler runs; only the kernel dropping the leases tells the keeper.
        first.kill()
        second.kill()
        first.wait(timeout=30)
        second.wait(timeout=30)
        _wait_gone([state.keeper_pid, state.server_pid], state.port, home, within_s=idle_s + 15)
        log = (home / "veille-shared-api.log").read_text()
        assert f"no run for {idle_s:.0f} s" in log, log
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()


def test_a_killed_keeper_takes_its_server_along_and_the_next_client_starts_another(tmp_path: Path) -> None:
    home = tmp_path / "prefect-home"
    first, url = _start_client(home, 600)
    try:
        state = read_state(home)
        assert state is not None
        os.kill(state.keeper_pid, signal.SIGKILL)
        # (its state file stays: a SIGKILLed keeper cannot remove it; the next client ignores it)
        _wait_gone([state.keeper_pid, state.server_pid], state.port, home / "absent", within_s=15)
        second, url2 = _start_client(home, 600)  # the stale state file is not trusted
        try:
            fresh = read_state(home)
            assert fresh is not None and fresh.keeper_pid != state.keeper_pid and url2 != url
        finally:
            second.kill()
            second.wait(timeout=30)
            os.kill(fresh.keeper_pid, signal.SIGTERM)
            _wait_gone([fresh.keeper_pid, fresh.server_pid], fresh.port, home, within_s=30)
    finally:
        first.kill()
        first.wait(timeout=30)


def test_two_veille_runs_use_one_shared_server_then_stop_it(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(PROJECT_ROOT / "corpus", corpus)
    prefect_home = tmp_path / "prefect-home"
    env = _env(prefect_home)
    home = keyed_path(prefect_home, SHARED_API_KIND)  # this checkout's shared API folder
    veille = str(Path(sys.executable).with_name("veille"))
    # -X importtime: each night (the first in full, the second unchanged) says what it imported; neither
    # may import pandas (0.12-0.3 s of CPU), which only the notebook API needs (issue 40 item 1).
    argv = [
        sys.executable,
        "-X",
        "importtime",
        veille,
        "run",
        "--corpus",
        str(corpus),
        "--warehouse",
        str(tmp_path / "wh"),
        "--backend",
        "offline",
    ]
    keepers = []
    for night in range(2):
        done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=400)
        assert done.returncode == 0, done.stderr[-3000:]
        imported = [
            line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "import time:" in line
        ]
        assert "veille.flows.veille" in imported  # the flag took: the night's imports are listed
        assert not [m for m in imported if m.split(".")[0] == "pandas"], f"night {night} imported pandas"
        # The unchanged night records its plain parameters without FastAPI (veille.ops.flowparams).
        fastapi = [m for m in imported if m.split(".")[0] == "fastapi"]
        assert night == 0 or not fastapi, "the unchanged night imported fastapi"
        log = home / "veille-shared-api.log"
        assert "temporary Prefect API instead" not in done.stderr, (
            done.stderr[:1500],
            log.read_text(encoding="utf-8") if log.exists() else "(no keeper log)",
        )
        # The first run says it leaves a server behind, and how to stop it; the second found it.
        assert ("started a shared Prefect API" in done.stderr) == (night == 0), done.stderr[-2000:]
        state = read_state(home)
        assert state is not None
        keepers.append(state.keeper_pid)
    assert keepers[0] == keepers[1]  # the second run used the first one's server
    assert len(list((tmp_path / "wh" / "runs").iterdir())) == 2
    status = subprocess.run([veille, "shared-api"], env=env, capture_output=True, text=True, timeout=60)
    assert status.returncode == 0 and state.url in status.stdout, status.stdout + status.stderr
    stopped = subprocess.run(
        [veille, "shared-api", "--stop"], env=env, capture_output=True, text=True, timeout=60
    )
    assert stopped.returncode == 0, stopped.stderr
    _wait_gone([state.keeper_pid, state.server_pid], state.port, home, within_s=15)
    after = subprocess.run([veille, "shared-api"], env=env, capture_output=True, text=True, timeout=60)
    assert after.returncode == 1 and "no shared Prefect API" in after.stdout


# A client as `veille run` is one, through early_lease: the folder is this checkout's key.
EARLY_CLIENT = """
import sys, time
from veille.ops.shared_api import early_lease
api = early_lease("shared", 600.0)
print(api.wait(300), flush=True)
time.sleep(600)
"""


def test_two_checkouts_on_one_prefect_home_never_share_a_server(tmp_path: Path) -> None:
    # Another checkout of the same code (the package copied), run by the same interpreter: it must
    # start its own server rather than use this one's (issue 39: `make run` used a shared API
    # another checkout's virtual environment had started).
    prefect_home = tmp_path / "prefect-home"
    other = tmp_path / "autre-clone"
    shutil.copytree(PROJECT_ROOT / "veille", other / "veille", ignore=shutil.ignore_patterns("__pycache__"))
    clients: list[subprocess.Popen[str]] = []
    urls = []
    try:
        for extra, cwd in (({}, tmp_path), ({"PYTHONPATH": str(other)}, other)):
            proc = subprocess.Popen(
                [sys.executable, "-c", EARLY_CLIENT],
                env={**_env(prefect_home), **extra},
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            clients.append(proc)
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.poll() is not None else url
            urls.append(url)
        assert urls[0] != urls[1]  # two servers
        folders = sorted((prefect_home / SHARED_API_KIND).iterdir())
        states = {state.checkout: state for state in map(read_state, folders) if state is not None}
        assert set(states) == {str(PROJECT_ROOT), str(other)}  # each keeper runs its own checkout's code
        assert states[str(PROJECT_ROOT)].url == urls[0] and states[str(other)].url == urls[1]
        assert keyed_path(prefect_home, SHARED_API_KIND) in folders
    finally:
        for proc in clients:
            proc.kill()
            proc.wait(timeout=30)
        for folder in (prefect_home / SHARED_API_KIND).glob("*"):
            state = read_state(folder)
            if state is not None and _alive(state.keeper_pid):
                os.kill(state.keeper_pid, signal.SIGTERM)  # the keepers this test started
                _wait_gone([state.keeper_pid, state.server_pid], state.port, folder, within_s=30)
