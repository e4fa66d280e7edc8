"""The committed Parquet files whose footer was read intact, kept so a night re-reads only new or touched ones.

:func:`veille.warehouse.repair.unreadable_files` opened every committed file's footer each night:
one open and one Thrift parse per file and table, growing with the history (issue 40, a warm night).
A file whose footer read intact is recorded with its size, modification and change times (ns) and
inode; while all four are unchanged it was not rewritten, replaced, copied over or truncated through
the filesystem, so its footer is not read again. Any write, rename over it, copy or ``touch`` changes
one of them and the file is read again; a file that failed is never recorded, so it is read every
night until it is moved aside. What no stat can see (a disk's silent bit rot that leaves the
filesystem's metadata as it was) is not caught here, as the ingestion's size + mtime shortcut does
not see it either. The filesystem's clock is coarse (a few ms), so a file changed in the same tick
as its check would keep its stamp: a file changed less than ``SETTLE_NS`` before its check is read
but not recorded (git's « racy » rule), and is read again the next night.

The record is ``<parquet_dir>/_index/footers.json`` (outside every table's glob), a cache: unreadable
or absent, every footer is read as before; two nights writing it at once cost at most a re-read.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from veille.warehouse.commit import INDEX_DIR

__all__ = ["FOOTERS_FILE", "footers_path", "unchecked"]

FOOTERS_FILE = "footers.json"

SETTLE_NS = 2_000_000_000  # a file changed within 2 s of its check is not recorded (coarse clock)

Stamp = list[int]  # [size, mtime_ns, ctime_ns, inode]


def _now_ns() -> int:
    return time.time_ns()


def footers_path(parquet_dir: Path) -> Path:
    """``<parquet_dir>/_index/footers.json``."""
    return Path(parquet_dir) / INDEX_DIR / FOOTERS_FILE


def _stamp(path: Path) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _load(path: Path) -> dict[str, Stamp]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, list)}


def _save(path: Path, record: dict[str, Stamp]) -> None:
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
        os.replace(temp, path)
    except OSError:  # a cache: not written, the footers are read again next night
        with contextlib.suppress(OSError):
            temp.unlink()


def unchecked(
    parquet_dir: Path, files: Iterable[tuple[str, Path]], intact: Callable[[Path], bool]
) -> list[tuple[str, Path]]:
    """The (table, path) pairs of ``files`` whose footer is not intact, calling ``intact`` only on
    files new or changed since their footer last read intact; records the intact ones."""
    where = footers_path(parquet_dir)
    before = _load(where)
    after: dict[str, Stamp] = {}
    bad: list[tuple[str, Path]] = []
    settled_before = _now_ns() - SETTLE_NS
    for table, path in files:
        key = str(Path(path).relative_to(parquet_dir))
        stamp = _stamp(path)
        if stamp is not None and before.get(key) == stamp:
            after[key] = stamp
            continue
        if not intact(path):
            bad.append((table, path))
            continue
        # unchanged while it was read, and changed long enough ago that a later change moves its stamp
        if stamp is not None and _stamp(path) == stamp and max(stamp[1], stamp[2]) < settled_before:
            after[key] = stamp
    if after != before:
        _save(where, after)
    return bad
