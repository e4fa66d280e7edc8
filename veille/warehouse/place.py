"""Is the warehouse folder usable? Checked before a run starts, so a bad path is one clear line.

A run writes its folder, the corpus database, the Parquet files and the caches under the warehouse
folder. When that path cannot hold them (a file where the folder should be, a folder where the
database file should be, no permission, a read-only file system), every later step fails somewhere
deep in Prefect, DuckDB or pyarrow, with a traceback that names a sub-path. :func:`check_warehouse`
finds the first such problem up front and raises :class:`UnusableWarehouseError`, whose message
names the path, what was found and what is expected.

The check creates the warehouse folder (a run would create it anyway) and one probe file in it,
removed at once: only a real write tells a read-only mount or a missing permission for certain
(``os.access`` is always true for root, even where the mount refuses writes).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from veille.warehouse.errors import WarehouseError

__all__ = ["UnusableWarehouseError", "check_warehouse"]


class UnusableWarehouseError(WarehouseError):
    """The warehouse path cannot hold a warehouse; the message names the path and what is expected."""

    expected_failure = True  # the run logs keep one line, not Prefect's frames


def _kind(path: Path) -> str:
    return "a folder" if path.is_dir() else "a file" if path.exists() else "nothing"


def _first_existing(path: Path) -> Path:
    current = path
    while not current.exists() and current != current.parent:
        current = current.parent
    return current


def check_warehouse(warehouse_dir: Path, database: Path | None = None) -> None:
    """Raise :class:`UnusableWarehouseError` unless ``warehouse_dir`` is (or can be made) a folder
    this process can write in, whose ``runs``/``parquet``/``cache`` entries are folders and whose
    corpus database (``database``, default ``<warehouse>/veille.duckdb``) is not a folder."""
    warehouse_dir = Path(warehouse_dir)
    expected = "expected a folder this user can write in (or a path where one can be created)"
    if warehouse_dir.exists() and not warehouse_dir.is_dir():
        raise UnusableWarehouseError(f"warehouse {warehouse_dir} is a file; {expected}")
    above = _first_existing(warehouse_dir)
    if not above.is_dir():
        raise UnusableWarehouseError(
            f"warehouse {warehouse_dir} cannot be created: {above} is a file; {expected}"
        )
    try:
        warehouse_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=warehouse_dir, prefix=".write-probe-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UnusableWarehouseError(
            f"warehouse {warehouse_dir} is not writable ({reason}); {expected}"
        ) from None
    for name in ("runs", "parquet", "cache"):
        sub = warehouse_dir / name
        if sub.exists() and not sub.is_dir():
            raise UnusableWarehouseError(
                f"warehouse {warehouse_dir}: {sub} is {_kind(sub)}; expected a folder (the "
                f"warehouse's {name}), or nothing there"
            )
    database = Path(database) if database is not None else warehouse_dir / "veille.duckdb"
    if database.is_dir():
        raise UnusableWarehouseError(
            f"corpus database {database} is a folder; expected a DuckDB file, or nothing there"
        )
