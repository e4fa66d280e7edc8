"""The footers read intact are kept (veille/warehouse/footer_memo.py): a night re-reads only new or
changed committed files, and finds exactly the unreadable files a full check finds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.warehouse import footer_memo
from veille.warehouse.commit import committed_files
from veille.warehouse.repair import _footer_intact, unreadable_files
from veille.warehouse.schema import TABLES

TABLE_NAMES = sorted(TABLES)[:3]
RUNS = ["r1", "r2", "r3"]
GARBAGE = b"not a parquet file at all"


def _path(root: Path, table: str, run: str) -> Path:
    return root / table / "run_date=2026-01-01" / f"{run}.parquet"


def _write(path: Path, rows: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp")
    pq.write_table(pa.table({"x": list(range(rows))}), temp)
    os.replace(temp, path)  # as write_atomic: a new inode


def _full_check(root: Path) -> list[tuple[str, Path]]:
    """The definition: every committed file's footer read."""
    return [
        (table, path) for table in TABLES for path in committed_files(root, table) if not _footer_intact(path)
    ]


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    # Files written by the test are seconds old for the memo (a night checks files of earlier nights).
    monkeypatch.setattr(footer_memo, "_now_ns", lambda: 10**19)


def _warehouse(root: Path) -> None:
    for table in TABLE_NAMES:
        for n, run in enumerate(RUNS):
            _write(_path(root, table, run), n + 1)


def _counting(calls: list[Path]):  # type: ignore[no-untyped-def]
    def intact(path: Path) -> bool:
        calls.append(path)
        return _footer_intact(path)

    return intact


def _files(root: Path) -> list[tuple[str, Path]]:
    return [(t, p) for t in TABLES for p in committed_files(root, t)]


def test_an_unchanged_warehouse_reads_no_footer_again(tmp_path: Path, settled: None) -> None:
    _warehouse(tmp_path)
    first: list[Path] = []
    assert footer_memo.unchecked(tmp_path, _files(tmp_path), _counting(first)) == []
    assert len(first) == len(TABLE_NAMES) * len(RUNS)
    second: list[Path] = []
    assert footer_memo.unchecked(tmp_path, _files(tmp_path), _counting(second)) == []
    assert second == []


def test_a_file_changed_just_before_its_check_is_not_recorded(tmp_path: Path) -> None:
    # Real clock: the files were just written, within SETTLE_NS: a same-size edit in the same
    # clock tick could keep their stamp, so they are read again next time.
    _warehouse(tmp_path)
    footer_memo.unchecked(tmp_path, _files(tmp_path), _footer_intact)
    again: list[Path] = []
    footer_memo.unchecked(tmp_path, _files(tmp_path), _counting(again))
    assert len(again) == len(TABLE_NAMES) * len(RUNS)


def test_an_unreadable_record_reads_every_footer(tmp_path: Path, settled: None) -> None:
    _warehouse(tmp_path)
    footer_memo.unchecked(tmp_path, _files(tmp_path), _footer_intact)
    footer_memo.footers_path(tmp_path).write_text("{not json", encoding="utf-8")
    calls: list[Path] = []
    assert footer_memo.unchecked(tmp_path, _files(tmp_path), _counting(calls)) == []
    assert len(calls) == len(TABLE_NAMES) * len(RUNS)


EDITS = st.sampled_from(["garbage", "truncate", "rewrite", "copy_over", "touch", "remove", "add"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(EDITS, st.sampled_from(TABLE_NAMES), st.sampled_from([*RUNS, "r4"])),
        min_size=1,
        max_size=6,
    ),
    nights=st.integers(min_value=1, max_value=3),
)
def test_the_memo_finds_what_a_full_check_finds(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    edits: list[tuple[str, str, str]],
    nights: int,
) -> None:
    monkeypatch.setattr(footer_memo, "_now_ns", lambda: 10**19)
    root = tmp_path_factory.mktemp("wh")
    _warehouse(root)
    for _ in range(nights):  # earlier nights' checks recorded every intact footer
        assert unreadable_files(root) == _full_check(root) == []
    for kind, table, run in edits:
        path = _path(root, table, run)
        if kind == "add" or not path.exists():
            _write(path, 7)
        elif kind == "garbage":
            path.write_bytes(GARBAGE)
        elif kind == "truncate":
            with path.open("r+b") as handle:
                handle.truncate(max(0, path.stat().st_size - 5))
        elif kind == "rewrite":
            _write(path, 11)
        elif kind == "copy_over":
            other = _path(root, table, RUNS[0] if run != RUNS[0] else RUNS[1])
            if other.exists():
                shutil.copyfile(other, path)
        elif kind == "touch":
            path.touch()
        elif kind == "remove":
            path.unlink()
    assert unreadable_files(root) == _full_check(root)
    assert unreadable_files(root) == _full_check(root)  # and again from the updated record
