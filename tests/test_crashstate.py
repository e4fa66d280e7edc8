"""The crash tests' inspection helpers keep what a file held while it is the same file
(tests/crashstate.py): a file replaced after a first read (a rerun rewriting it, a kill leaving a
half file under the same name) is read again, so a damaged file is never reported as readable."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.crashstate import persisted_results, warehouse_state


def _runs_file(warehouse: Path, run_id: str) -> Path:
    path = warehouse / "parquet" / "runs" / "run_date=2026-12-07" / f"{run_id}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _replace(path: Path, data: bytes) -> None:
    """As the warehouse writes: a temporary name, then a rename over the old file."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_replaced_parquet_file_is_read_again(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    path = _runs_file(warehouse, "R1")
    pq.write_table(pa.table({"run_id": ["R1"], "status": ["completed"]}), path)
    first = warehouse_state(warehouse)
    assert first.unreadable == [] and first.statuses == {"R1": "completed"}
    assert warehouse_state(warehouse).statuses == {"R1": "completed"}  # served from what was read

    good = path.read_bytes()
    _replace(path, good[: len(good) // 2])  # half a file under the same name
    assert warehouse_state(warehouse).unreadable == [str(path)]

    pq.write_table(pa.table({"run_id": ["R1"], "status": ["failed"]}), path)  # rewritten in place
    again = warehouse_state(warehouse)
    assert again.unreadable == [] and again.statuses == {"R1": "failed"}


def test_a_replaced_result_file_is_read_again(tmp_path: Path) -> None:
    from prefect.results import ResultRecord, ResultRecordMetadata
    from prefect.serializers import PickleSerializer

    results = tmp_path / "prefect-results"
    results.mkdir()
    record: ResultRecord[int] = ResultRecord(
        metadata=ResultRecordMetadata(storage_key="k", serializer=PickleSerializer()), result=42
    )
    path = results / "k"
    path.write_bytes(record.serialize())
    assert persisted_results(results) == {"k": "int"}
    assert persisted_results(results) == {"k": "int"}
    _replace(path, record.serialize()[:20])  # a write cut short by a kill
    assert persisted_results(results) == {"k": None}
