"""veille.warehouse.api: DataFrames for notebooks, over the same read-only views as `veille sql`."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from veille import warehouse as wh
from veille.warehouse import api
from veille.warehouse.synth import ROLES, demo_warehouse, write_synthetic_run

T0 = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two corpora, three nights each; the first night of corpus-a retried (two attempts)."""
    root = tmp_path_factory.mktemp("api")
    for night in range(3):
        for offset, corpus in enumerate(("corpus-a", "corpus-b")):
            seed = 10 * night + offset
            fields = {"corpus_dir": corpus, "flow_run_id": f"flow-{seed}", "attempt": 1}
            if night == 0 and corpus == "corpus-a":
                failed = write_synthetic_run(
                    root / "runs", T0, seed=99, status="failed", with_grades=False, run_fields=fields
                )
                wh.record_run_dir(failed, root / "parquet")
                fields = {**fields, "attempt": 2}
            started = T0 + timedelta(days=night, minutes=30 + offset)
            folder = write_synthetic_run(root / "runs", started, seed=seed, run_fields=fields)
            wh.record_run_dir(folder, root / "parquet")
    return root


def test_runs_is_one_row_per_flow_run(warehouse: Path) -> None:
    frame = api.runs(warehouse)
    assert isinstance(frame, pd.DataFrame) and len(frame) == 6
    assert frame["started_at"].is_monotonic_decreasing
    assert str(frame["started_at"].dtype) == "datetime64[us, UTC]"
    retried = frame[frame["flow_run_id"] == "flow-0"].iloc[0]
    assert (retried["flow_run_attempt"], retried["flow_run_attempts"], retried["status"]) == (
        2,
        2,
        "completed",
    )
    assert len(api.runs(warehouse, attempts=True)) == 7
    assert len(api.runs(warehouse, limit=2)) == 2
    assert "settings_json" not in frame.columns


def test_trends_per_corpus_and_since(warehouse: Path) -> None:
    all_runs = api.trends(warehouse)
    assert len(all_runs) == 6 and all_runs["started_at"].is_monotonic_increasing
    only_a = api.trends(warehouse, corpus="corpus-a")
    assert set(only_a["corpus_dir"]) == {"corpus-a"} and len(only_a) == 3
    assert only_a["score_judge"].notna().all()  # the failed attempt (no grades) is not a point
    assert len(api.trends(warehouse, since=date(2026, 3, 2))) == 4


def test_cost_by_role_and_query(warehouse: Path) -> None:
    costs = api.cost_by_role(warehouse)
    assert {"run_date", "role", "calls", "cost_usd"} <= set(costs.columns)
    assert set(costs["role"]) == set(ROLES)
    by_role = api.query(
        "SELECT role, sum(cost_usd) AS cost FROM llm_calls WHERE run_id IN (SELECT run_id FROM runs) "
        "GROUP BY role ORDER BY role",
        warehouse_dir=warehouse,
    )
    assert list(by_role["role"]) == sorted(ROLES) and (by_role["cost"] > 0).all()
    one = api.query(
        "SELECT count(*) AS n FROM runs WHERE corpus_dir = ?", ["corpus-b"], warehouse_dir=warehouse
    )
    assert one["n"].tolist() == [3]


def test_the_api_is_read_only_and_times_out(warehouse: Path, tmp_path: Path) -> None:
    with pytest.raises(wh.ReadOnlyQueryError, match="COPY statements are refused"):
        api.query(f"COPY (SELECT 1) TO '{tmp_path}/x.csv'", warehouse_dir=warehouse)
    with pytest.raises(wh.ReadOnlyQueryError, match="may only read the warehouse"):
        api.query("SELECT * FROM read_csv('/etc/passwd')", warehouse_dir=warehouse)
    with pytest.raises(wh.QueryTimeoutError):
        api.query("SELECT count(*) FROM range(100000000000)", warehouse_dir=warehouse, timeout_s=0.5)
    assert not (tmp_path / "x.csv").exists()


DOC = Path(__file__).resolve().parents[1] / "docs" / "warehouse.md"
DEMO = "/tmp/veille-demo"


def test_the_documented_example_runs_as_written_and_prints_what_the_doc_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The notebook example of docs/warehouse.md, read from the doc and run on the demo warehouse it
    names: it runs (a column renamed in a view breaks it) and prints the output the doc shows."""
    section = DOC.read_text(encoding="utf-8").split("## Python API for notebooks", 1)[1].split("\n## ", 1)[0]
    code, shown = re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)
    demo_warehouse(tmp_path)
    exec(compile(code.replace(DEMO, str(tmp_path)), str(DOC), "exec"), {})
    assert capsys.readouterr().out == shown


def test_a_retried_night_costs_both_attempts_in_every_frame(warehouse: Path) -> None:
    attempts = api.runs(warehouse, attempts=True)
    both = attempts.loc[attempts["flow_run_id"] == "flow-0", "cost_usd"].sum()
    assert len(attempts[attempts["flow_run_id"] == "flow-0"]) == 2
    run = api.runs(warehouse).set_index("flow_run_id").loc["flow-0"]
    trend = api.trends(warehouse).set_index("flow_run_id").loc["flow-0"]
    assert run["flow_run_cost_usd"] == pytest.approx(both)
    assert trend["flow_run_cost_usd"] == pytest.approx(both)
    assert "cost_usd" not in api.trends(warehouse).columns  # no last-attempt-only cost to mistake for it
