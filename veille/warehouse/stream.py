"""One read-only warehouse statement whose rows come in batches (``veille sql --max-rows 0``).

:func:`stream_query` gives the columns and an iterator of row batches (``fetchmany``: DuckDB streams
the result, it is never held whole), so printing ten million rows takes the memory of one batch, not
of the result (2.8 GB for 10M rows as CSV when the whole result was fetched first; measured by
``bench/sql_stream.py``). The statement is checked as :func:`veille.warehouse.query` checks it and
stops after ``timeout_s`` — counted from when it starts and across every batch, since a pipeline
breaker (ORDER BY, a window) runs inside ``execute`` — with :class:`QueryTimeoutError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from veille.warehouse.errors import QueryTimeoutError, ReadOnlyQueryError, WarehouseError
from veille.warehouse.limits import Limits
from veille.warehouse.queries import check_read_only, connect

__all__ = ["BATCH_ROWS", "Rows", "stream_query"]

BATCH_ROWS = 10_000  # rows per batch: a table of this many rows renders in about a second
Rows = Iterator[list[tuple[Any, ...]]]


class _Clock:
    """The statement's deadline: a timer that interrupts the connection, and the message it leads to."""

    def __init__(self, timeout_s: float | None) -> None:
        self.timeout_s = timeout_s
        self.started: float | None = None  # when the statement first started (not the views' set-up)
        self.timer: threading.Timer | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.started if self.started is not None else 0.0

    def watch(self, con: duckdb.DuckDBPyConnection) -> None:
        self.stop()
        if self.started is None:
            self.started = time.monotonic()
        if self.timeout_s is not None:
            remaining = max(0.0, self.timeout_s - self.elapsed())
            self.timer = threading.Timer(remaining, con.interrupt)
            self.timer.daemon = True
            self.timer.start()

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()

    @contextmanager
    def errors(self, parquet_dir: Path) -> Iterator[None]:
        """DuckDB's errors as the warehouse's (the same as :func:`veille.warehouse.query`'s)."""
        try:
            yield
        except duckdb.InterruptException as exc:
            limit = self.timeout_s if self.timeout_s is not None else 0.0  # only the timer interrupts
            raise QueryTimeoutError.after(self.elapsed(), limit) from exc
        except duckdb.PermissionException as exc:
            raise ReadOnlyQueryError(
                f"the warehouse query may only read the warehouse ({Path(parquet_dir).resolve()}): {exc}"
            ) from exc
        except duckdb.Error as exc:
            raise WarehouseError(f"query failed: {exc}") from exc


@contextmanager
def stream_query(
    parquet_dir: Path,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    timeout_s: float | None,
    limits: Limits | None = None,
    batch_rows: int | None = None,
) -> Iterator[tuple[list[str], Rows]]:
    """``with stream_query(...) as (columns, batches)``: lists of at most ``batch_rows`` rows
    (default :data:`BATCH_ROWS`).

    Raises :class:`ReadOnlyQueryError` for anything but a read (before any row),
    :class:`QueryTimeoutError` once ``timeout_s`` has passed (batches already given stay given),
    :class:`WarehouseError` for a failing statement. Leaving the block closes the connection.
    """
    clock = _Clock(timeout_s)
    size = batch_rows or BATCH_ROWS
    con = connect(parquet_dir, queries=[sql], limits=limits)
    try:
        with clock.errors(parquet_dir):
            check_read_only(con, sql)
            clock.watch(con)
            try:
                result = con.execute(sql, params)
            except duckdb.CatalogException:
                # The lexical scan missed a view the statement reads: once more with every view.
                con.close()
                con = connect(parquet_dir, limits=limits)
                clock.watch(con)
                result = con.execute(sql, params)
            columns = [d[0] for d in result.description or []]

        def batches() -> Rows:
            with clock.errors(parquet_dir):
                while batch := result.fetchmany(size):
                    yield batch

        yield columns, batches()
    finally:
        clock.stop()
        con.close()
