"""The Polars snippet of docs/warehouse.md (« Reading the files with Polars ») runs as written on the
warehouse of a real offline night and gives the figures of the SQL queries beside it (issue 25).

The code is read from the doc, so the doc cannot drift from what is tested. A run that never
committed (its `llm_calls` file without a `runs` file) sits beside the real one: the views hide it,
and so must the snippet. Then the same files rewritten as schema version 1 wrote them are upgraded
(`veille warehouse upgrade`) and read again.
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.test_warehouse_upgrade import _downgrade
from veille import warehouse as wh
from veille.warehouse.upgrade import upgrade_warehouse

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_harness")]

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "warehouse.md"
SECTION = "## Reading the files with Polars"
UNCOMMITTED = "20991231T235959Z-dead00"  # a run killed after its llm_calls file, before `runs`


def _section() -> str:
    return DOC.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]


def _snippet(parquet: Path) -> dict[str, Any]:
    (code,) = re.findall(r"```python\n(.*?)```", _section(), flags=re.S)
    line = re.compile(r'^parquet = "[^"]*"', flags=re.M)
    assert len(line.findall(code)) == 1, "the snippet sets `parquet` on one line"
    namespace: dict[str, Any] = {}
    exec(compile(line.sub(f"parquet = {str(parquet)!r}", code), str(DOC), "exec"), namespace)
    return namespace


def _queries() -> list[str]:
    (sql,) = re.findall(r"```sql\n(.*?)```", _section(), flags=re.S)
    return [q.strip() for q in sql.split(";") if q.strip()]


def _same(left: list[tuple[Any, ...]], right: list[tuple[Any, ...]]) -> bool:
    def close(a: Any, b: Any) -> bool:
        if isinstance(a, float) or isinstance(b, float):
            return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return bool(a == b)

    return len(left) == len(right) and all(
        len(x) == len(y) and all(close(a, b) for a, b in zip(x, y, strict=True))
        for x, y in zip(left, right, strict=True)
    )


def _compare(parquet: Path) -> dict[str, list[tuple[Any, ...]]]:
    frames = _snippet(parquet)
    out = {}
    for name, sql in zip(("by_role", "alerts", "runs"), _queries(), strict=True):
        columns, rows = wh.query(parquet, sql)
        frame = frames[name]
        assert frame.columns == columns, name
        assert _same(frame.rows(), rows), (name, frame.rows(), rows)
        out[name] = rows
    return out


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    from veille.flows.veille import veille_flow

    warehouse = tmp_path_factory.mktemp("polars") / "warehouse"
    state = veille_flow(
        corpus=str(ROOT / "corpus"), backend="offline", warehouse=str(warehouse), return_state=True
    )
    assert state.is_completed(), state.message
    parquet = warehouse / "parquet"
    (calls,) = wh.committed_files(parquet, "llm_calls")
    ghost = calls.parent / f"{UNCOMMITTED}.parquet"
    pl.read_parquet(calls).with_columns(run_id=pl.lit(UNCOMMITTED)).write_parquet(ghost)
    return parquet


def test_the_documented_polars_snippet_gives_the_sql_figures(night: Path) -> None:
    figures = _compare(night)
    (run,) = figures["runs"]
    by_role = figures["by_role"]
    # A real night: every role of the offline pipeline called, the run's totals are the journal's.
    assert {"planner", "analyst", "writer", "critic", "judge"} <= {r[0] for r in by_role}
    assert run[4] == sum(r[1] for r in by_role) and run[5] == sum(r[2] for r in by_role)
    assert sum(r[3] for r in by_role) > 0
    # The uncommitted run's calls are in the files, not in the figures.
    everything = pl.read_parquet(f"{night}/llm_calls/*/*.parquet")
    assert everything.height == 2 * sum(r[2] for r in by_role)


def test_after_the_upgrade_old_files_give_the_same_figures(night: Path, tmp_path: Path) -> None:
    parquet = tmp_path / "parquet"
    shutil.copytree(night, parquet)
    before = _compare(parquet)
    (run_id,) = [r[0] for r in before["runs"]]
    for name in wh.TABLES:
        for path in wh.committed_files(parquet, name):
            if path.stem == run_id:
                _downgrade(path, name, 1)  # as schema version 1 wrote it
    wh.summary_index_path(parquet).unlink()
    assert "call_attempts" not in pl.read_parquet(f"{parquet}/runs/*/*.parquet").columns
    result = upgrade_warehouse(parquet)
    assert result.rewritten
    after = _compare(parquet)
    # Version 1 had no flow_run_attempt (the views number it: 1), otherwise the very same figures.
    assert after["by_role"] == before["by_role"] and after["alerts"] == before["alerts"]
    assert [r[:3] + r[4:] for r in after["runs"]] == [r[:3] + r[4:] for r in before["runs"]]
