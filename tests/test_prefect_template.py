"""tests/prefect_template.py: the session server's database is copied whole while its server holds it
open, and only the first worker of a session builds the template."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.prefect_template import DATABASE_NAME, copy_database, session_database

ROWS = st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.text(max_size=40)), max_size=60)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(committed=ROWS, pending=ROWS)
def test_a_copy_holds_every_committed_row_of_a_database_held_open_in_wal_mode(
    tmp_path_factory: pytest.TempPathFactory,
    committed: list[tuple[int, str]],
    pending: list[tuple[int, str]],
) -> None:
    # As a Prefect server holds its database: WAL mode, a connection left open, the last commits in
    # the -wal file, not yet in the database file (a plain file copy would miss them).
    folder = tmp_path_factory.mktemp("wal")
    source, target = folder / "server.db", folder / "template.db"
    server = sqlite3.connect(source)
    try:
        server.execute("PRAGMA journal_mode = WAL")
        server.execute("PRAGMA wal_autocheckpoint = 0")
        server.execute("CREATE TABLE t (n INTEGER, s TEXT)")
        server.executemany("INSERT INTO t VALUES (?, ?)", committed)
        server.commit()
        server.executemany("INSERT INTO t VALUES (?, ?)", pending)  # not committed: not in the copy
        copy_database(source, target)
    finally:
        server.close()
    with closing(sqlite3.connect(target)) as copy:
        assert copy.execute("SELECT n, s FROM t").fetchall() == committed
    assert list(folder.glob("*.partial")) == []


def _write(path: Path, value: str) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE IF NOT EXISTS marks (v TEXT)")
        db.execute("INSERT INTO marks VALUES (?)", (value,))
        db.commit()


def _marks(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as db:
        return [v for (v,) in db.execute("SELECT v FROM marks")]


def test_the_first_server_leaves_the_template_and_the_next_ones_start_from_it(tmp_path: Path) -> None:
    with session_database(tmp_path) as first:
        assert not first.copied and first.env == {} and not first.path.exists()
        _write(first.path, "migrated")  # what the first server's start leaves in its database
    _write(first.path, "a test's run")  # the first worker's tests: after the copy, not in it
    with session_database(tmp_path) as second:
        assert second.copied and second.folder != first.folder
        assert second.env == {"PREFECT_API_BLOCKS_REGISTER_ON_START": "false"}
        assert second.path.name == DATABASE_NAME and _marks(second.path) == ["migrated"]


def test_a_server_that_did_not_start_leaves_no_template(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), session_database(tmp_path) as first:
        _write(first.path, "half migrated")
        raise RuntimeError("the server did not answer")
    with session_database(tmp_path) as second:
        assert not second.copied and not second.path.exists()
