"""One name per meaning of « attempt » (schema version 7, issue 25): a warehouse written before the
rename reads under the new names in every view, before and after `veille warehouse upgrade`, with
the same values; no view shows a column named ``attempt`` or ``attempts``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from veille import warehouse as wh
from veille.warehouse.queries import _view_catalogue
from veille.warehouse.renames import rename_columns
from veille.warehouse.schema import renamed_columns
from veille.warehouse.synth import write_synthetic_run
from veille.warehouse.upgrade import upgrade_warehouse

T0 = datetime(2026, 2, 2, 2, 0, tzinfo=UTC)
FLOW_RUN = "11111111-2222-4333-8444-555555555555"
OLD_NAMES = {
    "runs": {"flow_run_attempt": "attempt", "call_attempts": "attempts"},
    "llm_calls": {"call_attempt": "attempt"},
}


def _as_version_6(path: Path, table: str) -> None:
    """Rewrite one file as schema version 6 wrote it: the old column names."""
    data = pq.ParquetFile(path).read()
    back = OLD_NAMES.get(table, {})
    data = data.rename_columns([back.get(c, c) for c in data.column_names])
    pq.write_table(data.replace_schema_metadata({b"veille.schema_version": b"6"}), path)


def _old_layout_warehouse(root: Path) -> tuple[Path, list[wh.RecordResult]]:
    """A retried flow run (attempts 1 and 2) and a plain run written by version 6, the summary index
    too, then one run written by the current version."""
    parquet = root / "parquet"
    results = []
    for seed, (day, fields) in enumerate(
        [
            (T0, {"flow_run_id": FLOW_RUN, "attempt": 1, "status": "failed"}),
            (T0 + timedelta(minutes=20), {"flow_run_id": FLOW_RUN, "attempt": 2}),
            (T0 + timedelta(days=1), {}),
        ],
        start=1,
    ):
        folder = write_synthetic_run(root / "runs", day, seed=seed, run_fields=fields)
        results.append(wh.record_run_dir(folder, parquet))
    for result in results:
        for table, path in result.files.items():
            _as_version_6(path, table)
    _as_version_6(wh.summary_index_path(parquet), "runs")
    folder = write_synthetic_run(root / "runs", T0 + timedelta(days=2), seed=9)
    results.append(wh.record_run_dir(folder, parquet))  # current: index now mixes both layouts
    return parquet, results


def _attempt_figures(parquet: Path) -> dict[str, list[tuple[object, ...]]]:
    q = {
        "run_attempts": "SELECT run_id, flow_run_attempt, flow_run_attempts, last_flow_run_attempt, "
        "call_attempts FROM run_attempts ORDER BY run_id",
        "llm_calls": "SELECT run_id, call_id, call_attempt FROM llm_calls ORDER BY run_id, seq",
        "run_trends": "SELECT run_id, scores_flow_run_attempt, flow_run_attempts, flow_run_call_attempts "
        "FROM run_trends ORDER BY run_id",
        "cost_by_role": "SELECT run_date, role, call_attempts FROM cost_by_role ORDER BY run_date, role",
    }
    return {name: wh.query(parquet, sql)[1] for name, sql in q.items()}


def test_an_old_layout_warehouse_reads_under_the_new_names_before_and_after_the_upgrade(
    tmp_path: Path,
) -> None:
    parquet, results = _old_layout_warehouse(tmp_path)
    assert "attempt" in pq.read_schema(results[0].files["llm_calls"]).names  # really the old layout
    before = _attempt_figures(parquet)
    retried, last = results[0].run_id, results[1].run_id
    attempts = {r[0]: r[1:] for r in before["run_attempts"]}
    assert attempts[retried] == (1, 2, False, results[0].summary["call_attempts"])
    assert attempts[last] == (2, 2, True, results[1].summary["call_attempts"])
    assert all(r[4] is not None and r[4] > 0 for r in before["run_attempts"])  # read from `attempts`
    journal = [r for r in before["llm_calls"]]
    assert journal and all(r[2] is not None and r[2] >= 1 for r in journal)  # read from `attempt`
    assert sum(r[2] for r in before["cost_by_role"]) == len(journal)
    trends = {r[0]: r[1:] for r in before["run_trends"]}
    both = results[0].summary["call_attempts"] + results[1].summary["call_attempts"]
    assert trends[last] == (2, 2, both)  # the index's old rows are read under the new names

    upgraded = upgrade_warehouse(parquet)
    assert len(upgraded.rewritten) == 3 * len(results[0].files)
    assert _attempt_figures(parquet) == before  # same values, now from the new names
    calls = pd.read_parquet(parquet / "llm_calls")
    assert "call_attempt" in calls.columns and "attempt" not in calls.columns
    assert calls["call_attempt"].notna().all()
    runs = pd.read_parquet(parquet / "runs")
    assert {"flow_run_attempt", "call_attempts"} <= set(runs.columns)
    assert not {"attempt", "attempts"} & set(runs.columns)


def test_no_view_shows_a_column_named_attempt(tmp_path: Path) -> None:
    parquet, _ = _old_layout_warehouse(tmp_path)
    views = [v for v in _view_catalogue(wh.VIEWS_DIR)]
    assert {"run_attempts", "runs", "run_trends", "cost_by_role", "llm_calls", "runs_summary"} <= set(views)
    for view in views:
        columns, _ = wh.query(parquet, f'SELECT * FROM "{view}" LIMIT 0')
        assert not {"attempt", "attempts", "attempt_count", "last_attempt", "scores_attempt"} & set(
            columns
        ), view


def test_the_dictionary_names_the_former_names(tmp_path: Path) -> None:
    parquet, _ = _old_layout_warehouse(tmp_path)
    _, rows = wh.query(
        parquet, "SELECT table_name, column_name, formerly FROM dictionary WHERE formerly IS NOT NULL"
    )
    assert sorted(rows) == [
        ("llm_calls", "call_attempt", "attempt"),
        ("runs", "call_attempts", "attempts"),
        ("runs", "flow_run_attempt", "attempt"),
    ]
    assert renamed_columns("runs") == {"attempt": "flow_run_attempt", "attempts": "call_attempts"}


@given(
    st.lists(
        st.tuples(st.none() | st.integers(1, 9), st.none() | st.integers(1, 9)),
        min_size=0,
        max_size=8,
    )
)
def test_a_table_with_both_names_keeps_the_new_value_and_fills_it_from_the_old(
    pairs: list[tuple[int | None, int | None]],
) -> None:
    # Rows of old and new files concatenated (the summary index): both columns, either may be NULL.
    old = pa.array([o for o, _ in pairs], pa.int32())
    new = pa.array([n for _, n in pairs], pa.int32())
    table = pa.table({"run_id": pa.array(["r"] * len(pairs)), "attempt": old, "flow_run_attempt": new})
    renamed = rename_columns(table, {"attempt": "flow_run_attempt"})
    assert renamed.column_names == ["run_id", "flow_run_attempt"]
    assert renamed.column("flow_run_attempt").to_pylist() == [n if n is not None else o for o, n in pairs]
    assert rename_columns(renamed, {"attempt": "flow_run_attempt"}).equals(renamed)  # idempotent
