"""The session server's database, migrated once per test session and copied for the other workers.

Each xdist worker starts its own session server (tests/conftest.py ``prefect_harness``). Migrating a
fresh SQLite database to Prefect's head was ~2.7 s of the ~6 s of CPU a server start costs, and
registering Prefect's block types ~0.7 s more (docs/benchmarks.md, « Test suite »). The first worker
to start its server does both and keeps a copy of the database as it stands once the server answers,
before any test used it; the session's other workers start theirs from a copy, with the block
registration off (the copy holds what it would register: same installed code, same session). The
copy is taken with SQLite's backup API, a consistent snapshot of a database the server holds open.
The workers take turns under a file lock, so a second worker waits for the first server's start.
"""

from __future__ import annotations

import fcntl
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DATABASE_NAME", "SessionDatabase", "session_database"]

# The file prefect.testing.utilities.prefect_test_harness creates in the folder its mkdtemp() returns.
DATABASE_NAME = "prefect-test.db"
TEMPLATE_NAME = "prefect-at-head.db"
LOCK_NAME = "prefect-at-head.lock"


@dataclass(frozen=True)
class SessionDatabase:
    """Where the server's database is (``folder``), the server's extra environment, and whether
    the database was copied from the session's template."""

    folder: Path
    copied: bool
    env: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.folder / DATABASE_NAME


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of ``source``, which a server may hold open, written whole or not at all."""
    partial = target.with_name(target.name + ".partial")
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(partial)) as dst:
        src.backup(dst)
    partial.replace(target)


@contextmanager
def session_database(shared: Path) -> Iterator[SessionDatabase]:
    """Start the server inside this block, on ``SessionDatabase.path``: the first worker of the
    session (``shared``: a folder all its workers see) leaves the template behind on leaving it."""
    folder = Path(tempfile.mkdtemp(prefix="prefect-harness-", dir=shared))
    template = shared / TEMPLATE_NAME
    with _locked(shared / LOCK_NAME):
        if template.is_file():
            shutil.copyfile(template, folder / DATABASE_NAME)
            yield SessionDatabase(folder, copied=True, env={"PREFECT_API_BLOCKS_REGISTER_ON_START": "false"})
        else:
            database = SessionDatabase(folder, copied=False)
            yield database
            copy_database(database.path, template)
