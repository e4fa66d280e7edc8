"""quality.regression: a judge score below the trailing median of the same corpus's completed runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from veille.run.summary import format_summary
from veille.settings import Settings
from veille.tasks.grade import quality_alerts
from veille.warehouse import metrics_table, record_run_dir
from veille.warehouse.quality import REGRESSION_CODE, QualityCheck, check_quality
from veille.warehouse.synth import write_synthetic_run

T0 = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
CORPUS = "/data/corpus-a"


def _history(warehouse: Path, scores: list[float], corpus: str = CORPUS, **kwargs: object) -> None:
    """One recorded run per night, oldest first, with the given final judge scores."""
    for night, score in enumerate(scores):
        seed = abs(hash((corpus, night))) % 10_000
        folder = write_synthetic_run(
            warehouse / "runs",
            T0 + timedelta(days=night, minutes=len(corpus)),
            seed=seed,
            judge_score=score,
            run_fields={"corpus_dir": corpus, "flow_run_id": f"{corpus}-{night}"},
            **kwargs,  # type: ignore[arg-type]
        )
        record_run_dir(folder, warehouse / "parquet")


def _grades(score: float | None) -> list[dict[str, object]]:
    return [
        {"grader": "judge", "target": "round-1", "score": 0.1},  # a round's draft: not the report
        {"grader": "judge", "target": "final", "score": score},
    ]


def _check(warehouse: Path, score: float | None, window: int = 7, min_runs: int = 3) -> QualityCheck | None:
    return check_quality(
        warehouse / "parquet",
        corpus_dir=CORPUS,
        run_id="20260320T020000Z-abcdef",
        grades=_grades(score),
        window=window,
        threshold=0.1,
        min_runs=min_runs,
    )


@pytest.fixture()
def warehouse(tmp_path: Path) -> Path:
    _history(tmp_path, [0.80, 0.82, 0.78, 0.81, 0.79])  # median 0.80
    _history(tmp_path, [0.30, 0.30, 0.30, 0.30], corpus="/data/corpus-b")  # another series
    # A failed run of the same corpus with a low score: not a baseline.
    folder = write_synthetic_run(
        tmp_path / "runs",
        T0 + timedelta(days=9),
        seed=77,
        status="failed",
        judge_score=0.1,
        run_fields={"corpus_dir": CORPUS},
    )
    record_run_dir(folder, tmp_path / "parquet")
    return tmp_path


def _regressed(check: QualityCheck | None) -> bool:
    assert check is not None
    return check.regressed


def test_a_drop_below_the_corpus_median_raises_the_alert(warehouse: Path) -> None:
    check = _check(warehouse, 0.65)
    assert check is not None and check.median == pytest.approx(0.80) and check.previous == 5
    assert check.regressed
    alert = check.alert()
    assert (alert.code, alert.severity, alert.stage) == (REGRESSION_CODE, "warning", "grade")
    assert "0.650" in alert.message and "0.800" in alert.message and "seuil 0.100" in alert.message


def test_a_small_drop_or_a_better_score_is_no_regression(warehouse: Path) -> None:
    assert not _regressed(_check(warehouse, 0.75))
    assert not _regressed(_check(warehouse, 0.95))


def test_no_verdict_without_a_judge_score_or_enough_history(warehouse: Path, tmp_path: Path) -> None:
    assert _check(warehouse, None) is None
    assert _check(warehouse, 0.2, min_runs=6) is None  # 5 completed runs of the corpus
    assert _check(tmp_path / "nowhere", 0.2) is None  # no warehouse yet


def test_the_median_is_over_the_last_n_runs(tmp_path: Path) -> None:
    _history(tmp_path, [0.9, 0.9, 0.9, 0.9, 0.6, 0.6, 0.6])
    assert not _regressed(_check(tmp_path, 0.55, window=3))  # median 0.6
    assert _regressed(_check(tmp_path, 0.55, window=7))  # median 0.9


def test_the_flow_helper_uses_the_settings(warehouse: Path) -> None:
    settings = Settings(warehouse_dir=warehouse, corpus_dir=Path(CORPUS))
    run_dir = warehouse / "runs" / "20260320T020000Z-abcdef"
    [alert] = quality_alerts(settings, run_dir, _grades(0.6))
    assert alert.code == REGRESSION_CODE
    assert quality_alerts(settings.model_copy(update={"quality_threshold": 0.3}), run_dir, _grades(0.6)) == []
    other = settings.model_copy(update={"corpus_dir": Path("/data/corpus-b")})
    assert quality_alerts(other, run_dir, _grades(0.6)) == []  # 0.6 is well above corpus-b's 0.3


def test_the_alert_shows_in_the_summary_and_the_metrics_artifact(warehouse: Path) -> None:
    check = _check(warehouse, 0.6)
    assert check is not None
    alert = check.alert().model_dump()
    folder = write_synthetic_run(warehouse / "runs", T0 + timedelta(days=20), seed=5, judge_score=0.6)
    alerts = [*json.loads((folder / "alerts.json").read_text()), alert]
    (folder / "alerts.json").write_text(json.dumps(alerts))
    assert f"[warning] {REGRESSION_CODE} : score du juge 0.600" in format_summary(folder)
    result = record_run_dir(folder, warehouse / "parquet")
    rows = {r["metric"]: r["value"] for r in metrics_table(result.summary, alerts)}
    assert rows[REGRESSION_CODE] == alert["message"]
    assert REGRESSION_CODE not in {r["metric"] for r in metrics_table(result.summary, [])}


def _parts_history(warehouse: Path, scores: list[float], start_day: int) -> None:
    """Nights whose final report the judge scored by parts (version « 1+parts »)."""
    for n, score in enumerate(scores):
        folder = write_synthetic_run(
            warehouse / "runs",
            T0 + timedelta(days=start_day + n, hours=1),
            seed=500 + n,
            judge_score=score,
            run_fields={"corpus_dir": CORPUS, "flow_run_id": f"parts-{n}"},
        )
        grades = json.loads((folder / "grades.json").read_text(encoding="utf-8"))
        for g in grades:
            if g["grader"] == "judge" and g["target"] == "final":
                g["version"] = "1+parts"
        (folder / "grades.json").write_text(json.dumps(grades), encoding="utf-8")
        record_run_dir(folder, warehouse / "parquet")


def _check_version(warehouse: Path, score: float, version: str) -> QualityCheck | None:
    grades = [{"grader": "judge", "target": "final", "score": score, "version": version}]
    return check_quality(
        warehouse / "parquet",
        corpus_dir=CORPUS,
        run_id="20260320T020000Z-abcdef",
        grades=grades,
        window=7,
        threshold=0.1,
        min_runs=3,
    )


def test_a_report_judged_by_parts_is_compared_only_with_reports_judged_by_parts(warehouse: Path) -> None:
    """A mean of parts is on another scale than a whole report's grade: whole-judged nights (median
    0.80) are no baseline for a night judged by parts, so its lower score raises nothing until
    enough nights were judged the same way, and then it is measured against those."""
    assert _check_version(warehouse, 0.46, "1+parts") is None  # no night judged by parts yet
    _parts_history(warehouse, [0.47, 0.45, 0.46], start_day=10)
    check = _check_version(warehouse, 0.46, "1+parts")
    assert check is not None and check.median == pytest.approx(0.46) and check.previous == 3
    assert not check.regressed
    dropped = _check_version(warehouse, 0.30, "1+parts")
    assert dropped is not None and dropped.regressed
    whole = _check_version(warehouse, 0.79, "1")  # a whole-judged night: the five whole nights
    assert whole is not None and whole.previous == 5 and whole.median == pytest.approx(0.80)
