"""Helpers for crash, concurrency and soak tests: a Prefect server on loopback, and a "zygote" that
runs ``veille run`` in child processes which tests may SIGKILL.

The zygote is a Python process that imports the CLI, the flow and their heavy dependencies once
(Prefect, DuckDB, Arrow: about 2 s of CPU), then ``fork``s one child per requested run. Each child
is a separate process that runs the real ``veille`` entry point (``veille.cli.main``) with the given
arguments and environment, its output redirected to files, so a crash test can kill it with
SIGKILL at any point and pay the start-up cost once instead of once per trial. The zygote imports
only (no thread, no client, no event loop is started before ``fork``), which is what makes forking
it safe. Prefect reads its settings at import, so ``PREFECT_*`` variables go in the zygote's own
environment; ``VEILLE_*`` variables are read per run and go in each request.

Protocol (JSON lines): the test writes ``{"argv": [...], "env": {...}, "out": path, "err": path}``
(optionally ``"new_session": true``: the child calls ``setsid``);
the zygote answers ``{"pid": N}`` when the child has started and ``{"pid": N, "code": C}`` when it
has ended (``C`` < 0: killed by signal ``-C``). Several children may run at once (two concurrent
runs, tests/test_concurrent_runs.py): a start is answered at once, the ends in the order they come.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.crashstate import (  # re-exported: the crash tests import their helpers from here
    DatabaseState,
    WarehouseState,
    assert_warehouse_consistent,
    corpus_hashes,
    database_state,
    journal,
    persisted_results,
    run_folder_from_output,
    warehouse_state,
)
from veille.ops.server import (
    LOOPBACK,
    api_url,
    free_port,
    server_env,
    start_prefect_process,
    stop_process,
    telemetry_off_env,
    wait_healthy,
)

__all__ = [
    "PROJECT_ROOT",
    "DatabaseState",
    "WarehouseState",
    "Zygote",
    "assert_warehouse_consistent",
    "corpus_hashes",
    "database_state",
    "journal",
    "loopback_server",
    "persisted_results",
    "prefect_env",
    "run_folder_from_output",
    "start_zygote",
    "warehouse_state",
]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SERVER_START_TIMEOUT_S = 240.0

# Imported once by the zygote; what a `veille run` would otherwise import in every child. The
# modules a night imports on first use (its steps, the CLI's sub-commands, the readers of HTML and
# long documents, the date and markdown libraries) were each child's: ~0.2 s of CPU per forked run
# of the bundled corpus, measured with cProfile in the children, 40-odd runs in the crash test.
_PRELOAD = (
    "veille.cli",
    "tests.killhooks",
    "veille.cli.run",
    "veille.cli.collect",
    "veille.cli.folder",
    "veille.cli.grade",
    "veille.cli.ops",
    "veille.cli.progress",
    "veille.cli.server",
    "veille.cli.warehouse",
    "veille.flows.veille",
    "veille.flows.night_steps",
    "veille.flows.warmup",
    "veille.ops.ephemeral",
    "veille.ops.shared_api",
    "prefect.utilities.visualization",
    "trafilatura",
    "bm25s",
    "veille.store.ingest",
    "veille.warehouse",
    "veille.run.summary",
    "veille.run.folder",
    "veille.models.caller",
    "veille.graders.dossier",
    "prefect.flow_engine",
    "prefect.task_engine",
    "prefect.results",
    "prefect.client.orchestration",
    "prefect.artifacts",
    "rich.console",
)


def prefect_env(api_url: str, home: Path) -> dict[str, str]:
    """Environment of a client process of the server at ``api_url`` (telemetry off, own PREFECT_HOME)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VEILLE_")}
    env.update(telemetry_off_env())
    env.update(
        {
            "PREFECT_API_URL": api_url,
            "PREFECT_HOME": str(home),
            "PREFECT_LOCAL_STORAGE_PATH": str(home / "storage"),
            "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "false",
        }
    )
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        env.pop(key, None)
    return env


@contextmanager
def loopback_server(base: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``prefect server start --host 127.0.0.1 --port <free>`` with a temporary PREFECT_HOME under
    ``base``, analytics off; yields (API URL, process) and stops it by PID (its process group too)."""
    home = base / "server-home"
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = server_env(port=port, home=home)
    proc = start_prefect_process(
        ["server", "start", "--host", LOOPBACK, "--port", str(port), "--analytics-off"],
        env=env,
        log_path=base / "server.log",
    )
    try:
        wait_healthy(api_url(port), timeout_s=SERVER_START_TIMEOUT_S, proc=proc)
        yield api_url(port), proc
    finally:
        stop_process(proc, grace_s=30)


_ZYGOTE_MAIN = r"""
import importlib, json, os, signal, sys
for name in PRELOAD:
    importlib.import_module(name)
# What a run computes once per process before its first role or language (veille/flows/warmup.py
# does the same while a run waits for its API): the language identifier and the roles' code
# fingerprints (kept per process, keyed by their inputs). Done once here, each child inherits them.
from veille.language import load_model
from veille.settings import Settings
from veille.tasks.clients import role_keys
load_model()
role_keys(Settings())
import threading
assert threading.active_count() == 1, threading.enumerate()  # fork is only safe without threads
requests, replies = sys.stdin, os.fdopen(REPLY_FD, "w", buffering=1)
replies.write(json.dumps({"ready": True}) + "\n")
import select
children = set()

def start(req):
    pid = os.fork()
    if pid == 0:  # the child: becomes `veille run ...`
        code = 1
        try:
            replies.close()
            if req.get("new_session"):
                os.setsid()  # its own process group: what it starts is found by its pgid
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            for fd, path in ((1, req["out"]), (2, req["err"])):
                target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(target, fd)
                os.close(target)
            os.environ.update(req["env"])
            sys.argv = ["veille", *req["argv"]]
            from tests.killhooks import install
            from veille.cli import main
            install()  # VEILLE_TEST_KILL_AT: the crash-test observer of veille.checkpoints
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            try:
                import atexit
                atexit._run_exitfuncs()  # Prefect flushes its log and event queues at exit
                sys.stdout.flush(); sys.stderr.flush()
            finally:
                os._exit(code)
    children.add(pid)
    replies.write(json.dumps({"pid": pid}) + "\n")

def reap(block):
    while children:
        pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
        if pid == 0:
            return
        children.discard(pid)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        replies.write(json.dumps({"pid": pid, "code": code}) + "\n")
        if block:
            return

# Requests read from the file descriptor (no buffered reader that select would not see), ends
# polled every 50 ms while a child runs.
pending, stdin_open, fd = b"", True, requests.fileno()
while stdin_open or children:
    if not stdin_open:
        reap(block=True)
        continue
    if select.select([fd], [], [], 0.05 if children else None)[0]:
        chunk = os.read(fd, 65536)
        stdin_open = bool(chunk)
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            start(json.loads(line))
    reap(block=False)
"""


@dataclass
class RunResult:
    code: int  # exit code; negative: killed by that signal
    out: str
    err: str
    seconds: float


class Zygote:
    """A pre-imported process that forks one ``veille`` child per :meth:`start` (see module doc)."""

    def __init__(self, env: Mapping[str, str], log_dir: Path, preload: tuple[str, ...] = ()) -> None:
        """``preload``: modules imported once here beyond the common set, for children that would
        each import them (a forked child shares what its zygote imported)."""
        self.log_dir = log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        read_fd, write_fd = os.pipe()
        script = f"PRELOAD = {(*_PRELOAD, *preload)!r}\nREPLY_FD = {write_fd}\n{_ZYGOTE_MAIN}"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script],
            env=dict(env),
            cwd=PROJECT_ROOT,
            stdin=subprocess.PIPE,
            stdout=(log_dir / "zygote.log").open("ab"),
            stderr=subprocess.STDOUT,
            pass_fds=(write_fd,),
            start_new_session=True,
        )
        os.close(write_fd)  # the zygote holds the write end; EOF on ours means it exited
        self._reply_fd, self._pending = read_fd, b""
        self._count = 0
        self.pid: int | None = None  # the last child started, until waited for
        self._running: dict[int, tuple[tuple[Path, Path], float]] = {}  # pid -> (out, err), start
        self._ended: dict[int, int] = {}  # pid -> exit code, not yet waited for
        ready = self._read(timeout_s=180)
        if not ready.get("ready"):
            raise RuntimeError(f"zygote did not start: {ready}")

    def _read(self, timeout_s: float) -> dict[str, Any]:
        """The zygote's next answer. Read from the pipe's descriptor into our own buffer: two
        answers written together (two children ending at once) would otherwise sit in a file
        object's buffer, where ``select`` does not see them."""
        import select

        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from the zygote within {timeout_s:.0f} s")
            ready, _, _ = select.select([self._reply_fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self._reply_fd, 65536)
                if not chunk:
                    log = (self.log_dir / "zygote.log").read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"the zygote exited (code {self.proc.poll()})\n{log}")
                self._pending += chunk
            elif self.proc.poll() is not None:
                log = (self.log_dir / "zygote.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the zygote exited (code {self.proc.returncode})\n{log}")
        line, self._pending = self._pending.split(b"\n", 1)
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    def start(self, argv: list[str], env: Mapping[str, str] | None = None, new_session: bool = False) -> int:
        """Fork a child running ``veille <argv>``; returns its PID. ``new_session``: the child calls
        ``setsid`` (as ``Popen(start_new_session=True)``), so its PID is the process group of all it
        starts. Children may overlap: :meth:`wait` takes the PID of the one to wait for."""
        self._count += 1
        paths = (self.log_dir / f"run-{self._count}.out", self.log_dir / f"run-{self._count}.err")
        request = {
            "argv": argv,
            "env": dict(env or {}),
            "out": str(paths[0]),
            "err": str(paths[1]),
            "new_session": new_session,
        }
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        started = time.monotonic()
        while True:  # the answer to this start; another child's end may come first
            reply = self._read(timeout_s=60)
            if "code" not in reply:
                break
            self._ended[int(reply["pid"])] = int(reply["code"])
        self.pid = int(reply["pid"])
        self._running[self.pid] = (paths, started)
        return self.pid

    @property
    def err_path(self) -> Path:
        """The current (or last) child's stderr file, readable while it runs."""
        return self.log_dir / f"run-{self._count}.err"

    def wait(self, timeout_s: float = 300.0, pid: int | None = None) -> RunResult:
        """Wait for child ``pid`` (by default the last started); its exit code (negative if
        killed), output and duration."""
        pid = self.pid if pid is None else pid
        if pid is None or pid not in self._running:
            raise RuntimeError("no such run started")
        try:
            while pid not in self._ended:
                reply = self._read(timeout_s=timeout_s)
                self._ended[int(reply["pid"])] = int(reply["code"])
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            raise
        finally:
            if pid == self.pid:
                self.pid = None
        paths, started = self._running.pop(pid)
        # A child killed right after fork may not have opened its files yet.
        out, err = (p.read_text(errors="replace") if p.exists() else "" for p in paths)
        return RunResult(self._ended.pop(pid), out, err, time.monotonic() - started)

    def run(
        self, argv: list[str], env: Mapping[str, str] | None = None, timeout_s: float = 300.0
    ) -> RunResult:
        self.start(argv, env)
        return self.wait(timeout_s)

    def kill_current(self) -> None:
        """SIGKILL the running child (by its PID)."""
        if self.pid is not None:
            with suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        for pid in self._running:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        stop_process(self.proc, grace_s=10)
        os.close(self._reply_fd)


def temp_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def start_zygote(base: Path) -> Zygote:
    """A zygote whose runs talk to the Prefect API of this test process (the session's test harness)."""
    from prefect.settings import PREFECT_API_URL

    api = PREFECT_API_URL.value()
    if not api:
        raise RuntimeError("no Prefect API configured: use the prefect_harness fixture")
    return Zygote(prefect_env(str(api), base / "prefect-home"), base / "logs")
