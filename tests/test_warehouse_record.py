"""The record_run task: Parquet tables plus the report and metrics artifacts under stable keys."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from veille.settings import Settings
from veille.tasks.record import artifact_key, record_run
from veille.warehouse import RunAlreadyRecordedError, metrics_table, query
from veille.warehouse.synth import write_synthetic_run


def test_artifact_keys_are_stable_and_valid() -> None:
    assert artifact_key("veille-report", None) == "veille-report"
    assert artifact_key("veille-report", "Veille Nightly/Prod_2") == "veille-report-veille-nightly-prod-2"
    assert artifact_key("veille-metrics", "veille-nightly") == "veille-metrics-veille-nightly"


def test_metrics_table_flags_lower_bound_costs(tmp_path: Path) -> None:
    from veille.warehouse import build_tables

    run_dir = write_synthetic_run(tmp_path, datetime(2026, 5, 1, tzinfo=UTC), unpriced_model=True)
    summary = build_tables(run_dir)["runs"].to_pylist()[0]
    rows = {r["metric"]: r["value"] for r in metrics_table(summary)}
    assert rows["cost_usd"].endswith("(lower bound: unpriced model)")
    assert rows["score.judge"] == f"{dict(summary['final_scores'])['judge']:.3f}"
    assert all(isinstance(v, str) for v in rows.values())
    # One meaning per name: output_tokens as in the runs table (thinking apart, issue 25).
    assert summary["reasoning_tokens"] > 0
    assert (rows["output_tokens"], rows["reasoning_tokens"]) == (
        str(summary["output_tokens"]),
        str(summary["reasoning_tokens"]),
    )


@pytest.mark.usefixtures("prefect_harness")
def test_record_run_writes_tables_and_versions_artifacts(tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    settings = Settings(warehouse_dir=tmp_path / "warehouse")
    start = datetime(2026, 5, 1, 2, tzinfo=UTC)
    runs = [write_synthetic_run(settings.runs_dir, start + timedelta(days=i), seed=i) for i in range(2)]
    from prefect import flow

    @flow(name="record-test")
    def record_all() -> list[dict[str, object]]:
        # In a flow, as in production: the artifacts belong to the flow run.
        return [record_run(settings, run_dir) for run_dir in runs]

    outcomes = record_all()
    assert [o["artifacts"] for o in outcomes] == [
        {"report": "veille-report-veille-nightly", "metrics": "veille-metrics-veille-nightly"}
    ] * 2
    _, rows = query(settings.parquet_dir, "SELECT run_id FROM runs ORDER BY run_id")
    assert [r[0] for r in rows] == sorted(str(o["run_id"]) for o in outcomes)

    with get_client(sync_client=True) as client:
        reports = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["veille-report-veille-nightly"]))
        )
        metrics = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["veille-metrics-veille-nightly"]))
        )
    assert len(reports) == 2 and {a.type for a in reports} == {"markdown"}
    assert any("## Synthèse" in str(a.data) for a in reports)
    assert len(metrics) == 2 and {a.type for a in metrics} == {"markdown"}
    assert all("## Par étape" in str(a.data) and "## Alertes" in str(a.data) for a in metrics)

    with pytest.raises(RunAlreadyRecordedError):
        record_run.fn(settings, runs[0])
