"""Reading the warehouse: the DuckDB views of ``views/*.sql`` and read-only queries over them.

:func:`connect` opens an in-memory DuckDB with the views (package data, read through
importlib.resources), file access limited to the Parquet directory and the configuration locked;
:func:`query` additionally refuses anything but a single read-only statement. Never share a
connection across threads.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pyarrow as pa

from veille.resources import package_dir
from veille.warehouse.commit import committed_files, committed_runs, read_summary_index, summary_index_path
from veille.warehouse.dictionary import DICTIONARY_VIEW, dictionary_table
from veille.warehouse.errors import QueryTimeoutError, ReadOnlyQueryError, WarehouseError
from veille.warehouse.limits import Limits, fetch_limited
from veille.warehouse.schema import TABLES
from veille.warehouse.viewsql import create_empty_view, current_schema_select

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "SQL_DIR",
    "SUMMARY_VIEW",
    "TABLE_VIEWS",
    "VIEWS_DIR",
    "check_read_only",
    "connect",
    "query",
    "query_arrow",
    "read_sql",
]

_T = TypeVar("_T")

VIEWS_DIR = package_dir("veille.warehouse", "views")
SQL_DIR = package_dir("veille.warehouse", "sql")  # named queries of the CLI (not views)


def read_sql(name: str) -> str:
    """A named query of the package (``veille/warehouse/sql/<name>.sql``)."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


_VIEW_NAME_RE = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+\"?(\w+)\"?", re.IGNORECASE)
SUMMARY_VIEW = "runs_summary"  # built in Python (see _create_summary_view), trend views read it


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*", "", sql)


_REFERENCE_RE = re.compile(r"\b(?:FROM|JOIN|DESCRIBE|SUMMARIZE)\s+\"?(\w+)", re.IGNORECASE)


def _references(sql: str) -> set[str]:
    """Relation names a statement reads (after FROM, JOIN, DESCRIBE, SUMMARIZE), lower-cased.

    A cheap lexical scan, not a parser: it may miss a name (``FROM a, b`` sees ``a`` only), which
    :func:`query` handles by retrying with every view; it never needs to bind anything.
    """
    return {name.lower() for name in _REFERENCE_RE.findall(_strip_comments(sql))}


@dataclass(frozen=True)
class _View:
    name: str
    sql: str  # empty for the Python-built summary view
    table: str | None  # the warehouse table it reads, for table views


# A table's view is named after it, except ``runs``: its rows are attempts (``run_records``, numbered
# by ``run_attempts``); the view ``runs`` is the last attempt of each flow run.
TABLE_VIEWS = {name: name for name in TABLES} | {"runs": "run_records"}


def _view_catalogue(views_dir: Path) -> dict[str, _View]:
    files = sorted(views_dir.glob("*.sql"))
    if not files:
        raise WarehouseError(f"{views_dir}: no view definitions (*.sql) found")
    # Built in Python: the summary index's view, and the data dictionary from the schemas.
    views = {SUMMARY_VIEW: _View(SUMMARY_VIEW, "", None), DICTIONARY_VIEW: _View(DICTIONARY_VIEW, "", None)}
    for path in files:
        sql = path.read_text(encoding="utf-8")
        match = _VIEW_NAME_RE.search(_strip_comments(sql))
        if match is None:
            raise WarehouseError(f"{path}: expected a CREATE [OR REPLACE] VIEW <name> AS ... statement")
        table = path.stem.removeprefix("table_") if path.stem.startswith("table_") else None
        if table is not None and TABLE_VIEWS.get(table) != match.group(1):
            raise WarehouseError(
                f"{path}: a table view file must create the view {TABLE_VIEWS.get(table, table)!r}"
            )
        views[match.group(1)] = _View(match.group(1), sql, table)
    return views


def _needed_views(views: Mapping[str, _View], queries: Iterable[str] | None) -> list[str]:
    """Views the queries mention, with what those views read, in dependency order.

    Creating a view binds it (every file of its table is opened), so only what a query needs is
    created. A query reading no known view (``SHOW TABLES``, ``SELECT 1``) gets them all.
    """
    referenced = set().union(*(_references(q) for q in queries)) if queries is not None else set()
    wanted = [name for name in views if name.lower() in referenced] or list(views)
    ordered: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in ordered:
            return
        if name in path:
            raise WarehouseError(f"views depend on each other in a cycle: {' -> '.join((*path, name))}")
        body = _references(views[name].sql)
        for other in views:
            if other != name and other.lower() in body:
                visit(other, (*path, name))
        ordered.append(name)

    for name in wanted:
        visit(name, ())
    return ordered


def connect(
    parquet_dir: Path,
    *,
    views_dir: Path | None = None,
    queries: Iterable[str] | None = None,
    limits: Limits | None = None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the warehouse views; file access limited to ``parquet_dir``, config locked.

    ``queries``: the SQL about to run; only the views it mentions (and what they read) are created
    (all of them when None). View files named ``table_<name>.sql`` define the view of one table;
    when that table has no file yet, an empty view with the table's schema replaces it so every
    query still binds. ``runs_summary`` is built here from the summary index. One connection per
    thread.
    """
    root = Path(parquet_dir).resolve()
    if not root.is_dir():
        raise WarehouseError(f"{root}: no warehouse here yet (no run recorded); run the flow first")
    views = _view_catalogue(views_dir or VIEWS_DIR)
    con = duckdb.connect(":memory:")
    try:
        # Before locking: the only directory DuckDB may touch is the Parquet tree.
        # DuckDB allows reading its temp directory (default .tmp in the working directory).
        scratch = (limits or Limits()).scratch_dir or root.parent / "scratch" / "duckdb"
        # DuckDB creates its temp directory but not the parents: a query past memory_limit failed
        # (« IO Error: Failed to create directory ») instead of spilling. Unwritable: DuckDB says so
        # if a query needs to spill, and every other query runs.
        with contextlib.suppress(OSError):
            scratch.mkdir(parents=True, exist_ok=True)
        con.execute("SET temp_directory = ?", [str(scratch)])
        if limits is not None:
            con.execute("SET memory_limit = ?", [limits.memory_limit])
            con.execute("SET threads = ?", [limits.threads])
        con.execute("SET allowed_directories = ?", [[str(root) + os.sep]])
        con.execute("SET enable_external_access = false")
        con.execute("SET autoinstall_known_extensions = false")
        con.execute("SET parquet_metadata_cache = true")
        con.execute("SET TimeZone = 'UTC'")  # timestamps print in UTC, as stored
        con.execute("SET enable_progress_bar = false")  # a long query must not draw on stderr
        con.execute("SET VARIABLE parquet_dir = ?", [str(root)])
        needed = _needed_views(views, queries)
        # Commit protocol: a run's rows are visible only once its `runs` file (the marker) exists.
        con.execute("SET VARIABLE committed_run_ids = ?", [sorted(committed_runs(root))])
        for name in needed:
            view = views[name]
            if name == SUMMARY_VIEW:
                _create_summary_view(con, root)
            elif name == DICTIONARY_VIEW:
                con.register(DICTIONARY_VIEW, dictionary_table())
            elif view.table in TABLES and not committed_files(root, view.table):
                create_empty_view(con, view.table, name=view.name)
            elif view.table in TABLES:
                _create_table_view(con, view.sql, view.table, view.name)
            else:
                con.execute(view.sql)
        con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        con.close()
        raise WarehouseError(f"cannot open the warehouse views over {root}: {exc}") from exc
    return con


def _create_summary_view(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """``runs_summary``: the ``runs`` rows, from the index when it covers every committed run."""
    committed = committed_runs(root)
    index = summary_index_path(root)
    if not committed:
        create_empty_view(con, "runs", name=SUMMARY_VIEW)
        return
    indexed: set[str] = set()
    table = read_summary_index(index)  # unreadable: read every run's file (the next commit rebuilds it)
    if table is not None and "run_id" in table.column_names:
        indexed = set(table.column("run_id").to_pylist())
    per_run = "hive_partitioning = true, hive_types = {'run_date': DATE}, union_by_name = true"
    if indexed and indexed <= set(committed):
        missing = sorted(str(committed[r]) for r in set(committed) - indexed)
        con.execute("SET VARIABLE runs_index = ?", [str(index)])
        source = "SELECT * FROM read_parquet(getvariable('runs_index'))"
        if missing:  # committed after the last index update (or the update failed)
            con.execute("SET VARIABLE runs_unindexed = ?", [missing])
            source += (
                f" UNION ALL BY NAME SELECT * FROM read_parquet(getvariable('runs_unindexed'), {per_run})"
            )
    else:  # no index, or it lists runs whose files are gone: read every run's file
        source = f"SELECT * FROM read_parquet(getvariable('parquet_dir') || '/runs/run_date=*/*.parquet', {per_run})"
    # The current schema's empty table first: columns added by a migration bind (as NULL) even
    # when every recorded run predates them; renamed columns read under their new names.
    con.execute(f"CREATE VIEW {SUMMARY_VIEW} AS {current_schema_select(con, 'runs', source)}")


def _create_table_view(con: duckdb.DuckDBPyConnection, sql: str, table: str, name: str) -> None:
    """The table's view over its files, behind the current schema's empty table (a column added by
    a migration binds as NULL even when every file predates it), and, but for ``runs``, only the
    rows of committed runs. The file's SELECT is inlined: no helper view shows uncommitted rows."""
    body = re.sub(
        r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+\S+\s+AS\s+", "", _strip_comments(sql), flags=re.I
    )
    committed = "" if table == "runs" else " WHERE list_contains(getvariable('committed_run_ids'), run_id)"
    files = f"SELECT * FROM ({body.strip().rstrip(';')}\n){committed}"
    con.execute(f'CREATE VIEW "{name}" AS {current_schema_select(con, table, files)}')


_READ_ONLY_TYPES = {"SELECT"}


def _statement_type(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[str, str]:
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise WarehouseError(f"SQL syntax error: {exc}") from exc
    if len(statements) != 1:
        raise ReadOnlyQueryError(f"give exactly one SQL statement (got {len(statements)})")
    statement = statements[0]
    try:
        kind = statement.type.name
    except ValueError:
        # A statement type DuckDB's Python enum does not know (UPDATE EXTENSIONS): not a SELECT.
        return _leading_keywords(statement.query), statement.query
    if kind == "LOAD":  # DuckDB files INSTALL under LOAD; say what the user wrote
        kind = _leading_keywords(statement.query)
    return kind, statement.query


def _leading_keywords(sql: str) -> str:
    match = re.match(r"\s*((?:FORCE\s+)?INSTALL|LOAD|UPDATE\s+EXTENSIONS|\w+)", _strip_comments(sql), re.I)
    return " ".join(match.group(1).upper().split()) if match else "this"


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse anything but one SELECT (DESCRIBE, SHOW, SUMMARIZE and FROM-first count) or EXPLAIN of one."""
    kind, text = _statement_type(con, sql)
    if kind == "EXPLAIN":
        inner = re.sub(r"^\s*explain(\s+analy[sz]e)?\s+", "", text, flags=re.IGNORECASE)
        kind, _ = _statement_type(con, inner)
    if kind not in _READ_ONLY_TYPES:
        raise ReadOnlyQueryError(
            f"the warehouse is read-only: {kind} statements are refused "
            "(only SELECT, WITH … SELECT, DESCRIBE, SHOW, SUMMARIZE and EXPLAIN run here)"
        )


DEFAULT_TIMEOUT_S = 60.0  # Settings.query_timeout_s


def query(
    parquet_dir: Path,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    views_dir: Path | None = None,
    read_only_check: bool = True,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    max_rows: int | None = None,
    limits: Limits | None = None,
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one read-only query against the views; return (column names, rows).

    ``max_rows``: pushed into the query; at most ``max_rows + 1`` rows come back (more exist when
    that many do). ``limits`` bounds memory, threads and the spill directory.

    A write, ATTACH, COPY, SET… raises :class:`ReadOnlyQueryError`; so does reading a file outside
    the warehouse (DuckDB refuses it: external access is off, only the Parquet directory is allowed).
    A query still running after ``timeout_s`` seconds (None: no limit) is interrupted and raises
    :class:`QueryTimeoutError`.
    """

    def fetch(
        con: duckdb.DuckDBPyConnection, sql: str, params: Any
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        return _fetch(con, sql, params) if max_rows is None else fetch_limited(con, sql, params, max_rows + 1)

    return _run(parquet_dir, sql, params, fetch, views_dir, read_only_check, timeout_s, limits)


def query_arrow(
    parquet_dir: Path,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
) -> pa.Table:
    """:func:`query`, the result as an Arrow table (exact types; ``.to_pandas()`` for a DataFrame)."""
    return _run(parquet_dir, sql, params, _fetch_arrow, None, True, timeout_s, None)


def _run(
    parquet_dir: Path,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None,
    fetch: Callable[[duckdb.DuckDBPyConnection, str, Any], _T],
    views_dir: Path | None,
    read_only_check: bool,
    timeout_s: float | None,
    limits: Limits | None,
) -> _T:
    con = connect(parquet_dir, views_dir=views_dir, queries=[sql], limits=limits)
    try:
        if read_only_check:
            check_read_only(con, sql)
        try:
            return _within(timeout_s, con, lambda: fetch(con, sql, params))
        except duckdb.CatalogException:
            # The lexical scan missed a view the query reads: retry once with every view.
            con.close()
            con = connect(parquet_dir, views_dir=views_dir, limits=limits)
            retry = con
            return _within(timeout_s, retry, lambda: fetch(retry, sql, params))
    except duckdb.PermissionException as exc:
        raise ReadOnlyQueryError(
            f"the warehouse query may only read the warehouse ({Path(parquet_dir).resolve()}): {exc}"
        ) from exc
    except duckdb.Error as exc:
        raise WarehouseError(f"query failed: {exc}") from exc
    finally:
        con.close()


def _within(timeout_s: float | None, con: duckdb.DuckDBPyConnection, fetch: Callable[[], _T]) -> _T:
    """``fetch()``, interrupted after ``timeout_s``: DuckDB has no statement timeout, so a timer
    thread calls ``interrupt()`` on the connection, and the running statement stops."""
    if timeout_s is None:
        return fetch()
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    started = time.monotonic()
    timer.start()
    try:
        return fetch()
    except duckdb.InterruptException as exc:
        raise QueryTimeoutError.after(time.monotonic() - started, timeout_s) from exc
    finally:
        timer.cancel()


def _fetch(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | Mapping[str, Any] | None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    relation = con.execute(sql, params) if params is not None else con.execute(sql)
    return [d[0] for d in relation.description or []], relation.fetchall()


def _fetch_arrow(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | Mapping[str, Any] | None
) -> pa.Table:
    return con.sql(sql, params=params).to_arrow_table()
