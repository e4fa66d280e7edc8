"""Unreadable Parquet files of committed runs: moved aside and re-recorded from their run folders.

One garbage file (a disk error, a careless copy) would otherwise break its table's view for every
run, on every later night. Each night checks every committed file's footer (the part a
reader opens first) and, for a run with an unreadable file, rebuilds that file from the run folder's
JSON files when they are intact. The bad file is renamed aside (:func:`veille.derived.set_aside`),
never deleted; without an intact run folder it stays aside and the run's rows of that table are gone
from the views until someone restores the file (the warning says so).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from veille.derived import set_aside
from veille.warehouse.commit import committed_files, write_atomic
from veille.warehouse.errors import WarehouseError
from veille.warehouse.footer_memo import unchecked
from veille.warehouse.rows import build_tables
from veille.warehouse.schema import TABLES

__all__ = ["Repairs", "repair_unreadable_files", "unreadable_files"]

logger = logging.getLogger(__name__)


@dataclass
class Repairs:
    """What :func:`repair_unreadable_files` did: file → where it went."""

    rebuilt: dict[str, str] = field(default_factory=dict)  # bad file -> moved-aside copy (rewritten)
    moved_only: dict[str, str] = field(default_factory=dict)  # bad file -> copy (no intact run folder)

    @property
    def count(self) -> int:
        return len(self.rebuilt) + len(self.moved_only)


def _footer_intact(path: Path) -> bool:
    try:
        pq.read_metadata(path)
    except (OSError, pa.ArrowException):
        return False
    return True


def unreadable_files(parquet_dir: Path) -> list[tuple[str, Path]]:
    """(table, path) of every committed file whose Parquet footer cannot be read (footers already
    read intact and untouched since are not read again: veille.warehouse.footer_memo)."""
    files = [(table, path) for table in TABLES for path in committed_files(parquet_dir, table)]
    return unchecked(parquet_dir, files, _footer_intact)


def repair_unreadable_files(parquet_dir: Path, runs_dir: Path) -> Repairs:
    """Move every unreadable committed file aside; rewrite it from ``<runs_dir>/<run id>`` when that
    folder's files are intact (the commit marker keeps its exclusive link)."""
    out = Repairs()
    by_run: dict[str, list[tuple[str, Path]]] = {}
    for table, path in unreadable_files(parquet_dir):
        by_run.setdefault(path.stem, []).append((table, path))
    for run_id, files in sorted(by_run.items()):
        folder = Path(runs_dir) / run_id
        try:
            tables = build_tables(folder)
        except WarehouseError as exc:
            for _, path in files:
                out.moved_only[str(path)] = str(
                    set_aside(
                        path, "unreadable Parquet", f"not rebuilt: the run folder is not intact ({exc})"
                    )
                )
            continue
        for table, path in files:
            moved = set_aside(path, "unreadable Parquet", f"rebuilt from {folder}")
            write_atomic(tables[table], path, exclusive=table == "runs")
            out.rebuilt[str(path)] = str(moved)
    return out
