"""An unchanged night is served from what the previous night kept (issue 40 item 4): the plan's
settling (veille.steps.settle_memo) and the verifier's results (veille.steps.verify_memo) are read
back, not computed, and the dossier is the one the computing night wrote.

Night 1 plans; night 2 reuses that plan (its outcome differs from night 1's, so it settles and keeps
the result); night 3 changes nothing: both memo files are read, neither is rewritten, and every
output that does not name the night (plan, findings, review, grades, the report but its dated news
section) equals night 2's, computed in full."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from veille.dossier import without_news
from veille.flows.veille import veille_flow

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

BUNDLED = Path(__file__).resolve().parents[1] / "corpus"


def _night(corpus: Path) -> Path:
    state = veille_flow(corpus=str(corpus), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    return Path(state.result())


def _json(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def test_an_unchanged_night_reads_back_the_settling_and_the_verification_and_writes_the_same_dossier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED, corpus)
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "wh"))
    cache = tmp_path / "wh" / "cache"
    _night(corpus)
    second = _night(corpus)
    kept = {name: (cache / name).read_bytes() for name in ("settled.json", "verified.json")}
    assert all(json.loads(v) for v in kept.values())
    (entry,) = json.loads(kept["settled.json"])["entries"]  # one slot: tonight's inputs
    assert entry[1] is not None  # the settling's shape: kept
    stamps = {name: (cache / name).stat().st_mtime_ns for name in kept}

    third = _night(corpus)
    # Read back, not computed: a computed result is written again (same bytes, a new mtime).
    assert {name: (cache / name).stat().st_mtime_ns for name in kept} == stamps
    for name in ("plan.json", "findings.json", "review.json", "sources.json"):
        assert _json(third, name) == _json(second, name), name
    scores = lambda folder: {(g["grader"], g["target"]): g["score"] for g in _json(folder, "grades.json")}  # noqa: E731
    assert scores(third) == scores(second)
    report = lambda folder: (folder / "report.md").read_text(encoding="utf-8")  # noqa: E731
    assert without_news(report(third)) == without_news(report(second))
