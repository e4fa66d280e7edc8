"""Runs that died before recording themselves: the run folder lock, and recovery by the next run.

A run killed mid-way (OOM killer, SIGKILL, power cut) never reaches its ``record-run`` step: its
run folder stays on disk (the journal of the calls it paid for, maybe a complete report) and the
warehouse never hears of it, or holds some of its table files without the ``runs`` commit marker
(killed during the recording). To lose nothing:

- every run creates ``<run folder>/.running`` already locked (``flock``) and keeps the lock for its
  whole life: the operating system drops the lock when the process dies, however it dies;
- after recording itself, a run records every other run folder whose ``.running`` file is still
  there but unlocked: a dead run. Its tables are written from whatever its folder holds (a run
  without run.json, or with a garbage one, is recorded as ``failed`` with run.json in ``missing_files``); table files of an
  interrupted recording are atomically replaced, so no partial recording remains;
- a run that recorded itself deletes its ``.running`` file, so the scan costs one ``stat`` per folder.

A live run's folder is always locked (the file is created under a temporary name, locked, then
renamed), so two runs at the same time never record each other. Recovery needs POSIX ``flock``;
elsewhere the lock is a no-op and recovery is skipped.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from veille.oserrors import writing
from veille.warehouse import RecordResult, RunAlreadyRecordedError, WarehouseError, record_run_dir
from veille.warehouse.folderio import salvaging

__all__ = ["LOCK_FILE", "Recovery", "RunLock", "lock_run_folder", "recover_dead_runs"]

logger = logging.getLogger(__name__)

LOCK_FILE = ".running"

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]


class RunLock:
    """The lock a live run holds on its folder; :meth:`release` once the run is recorded."""

    def __init__(self, path: Path, handle: IO[bytes] | None) -> None:
        self.path = path
        self._handle = handle

    def release(self) -> None:
        """Delete the lock file, then drop the lock (idempotent)."""
        if self._handle is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._handle.close()
        self._handle = None

    def abandon(self) -> None:
        """Drop the lock but keep the file: this run could not record itself, the next run records its
        folder. (A long-lived process — a served deployment — would otherwise hold it for ever.)"""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def lock_run_folder(folder: Path) -> RunLock:
    """Create ``<folder>/.running``, locked before it gets its name: whoever finds the file finds it
    locked for as long as this process lives."""
    path = Path(folder) / LOCK_FILE
    if fcntl is None:
        return RunLock(path, None)
    with writing(path, "creating the run folder's lock file"):  # a full disk names the file
        fd, temp = tempfile.mkstemp(dir=folder, prefix=f"{LOCK_FILE}.", suffix=".tmp")
        handle = os.fdopen(fd, "wb")
        try:
            handle.write(f"{os.getpid()}\n".encode())
            handle.flush()
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            os.replace(temp, path)
        except BaseException:
            handle.close()
            Path(temp).unlink(missing_ok=True)
            raise
    return RunLock(path, handle)


@dataclass
class Recovery:
    """What :func:`recover_dead_runs` did."""

    recorded: list[RecordResult] = field(default_factory=list)
    already_recorded: list[str] = field(default_factory=list)  # died after its commit marker
    salvaged: dict[str, list[str]] = field(default_factory=dict)  # run id -> its unreadable files
    failed: dict[str, str] = field(default_factory=dict)  # run id -> error (retried by the next run)

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.recorded]


def _record_dead_run(folder: Path, parquet_dir: Path, out: Recovery) -> RecordResult:
    """Record the dead run's folder; when one of its files is garbage (the run died writing it), record
    what is left instead, the garbage files counted missing (the run is then ``failed``): once, not a
    warning on every later night."""
    try:
        return record_run_dir(folder, parquet_dir)
    except RunAlreadyRecordedError:
        raise
    except WarehouseError:
        with salvaging() as problems:
            result = record_run_dir(folder, parquet_dir)
        out.salvaged[folder.name] = problems
        logger.warning("recorded the dead run %s from what is left: %s", folder.name, "; ".join(problems))
        return result


def recover_dead_runs(runs_dir: Path, parquet_dir: Path) -> Recovery:
    """Record every run folder under ``runs_dir`` left by a run that died before recording itself."""
    out = Recovery()
    if fcntl is None or not Path(runs_dir).is_dir():
        return out
    with os.scandir(runs_dir) as entries:
        folders = sorted(Path(e.path) for e in entries if e.is_dir())
    for folder in folders:
        lock_path = folder / LOCK_FILE
        try:
            handle = lock_path.open("rb")
        except FileNotFoundError:
            continue  # recorded (or a folder from before the lock existed)
        with handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live run (or another recovery) holds it
            try:
                if os.fstat(handle.fileno()).st_ino != os.stat(lock_path).st_ino:
                    continue
            except FileNotFoundError:
                continue  # the run released it between our open and our lock: it recorded itself
            try:
                out.recorded.append(_record_dead_run(folder, parquet_dir, out))
            except RunAlreadyRecordedError:
                out.already_recorded.append(folder.name)
            except Exception as exc:  # bad folder or full disk: keep the lock file, the next run retries
                out.failed[folder.name] = f"{type(exc).__name__}: {exc}"[:500]
                logger.warning("could not record the dead run %s: %s", folder.name, exc)
                continue
            lock_path.unlink(missing_ok=True)
    return out
