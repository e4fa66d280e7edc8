"""Offline nights follow the change through the flow (issue 40 item 3): a copy of the bundled corpus,
night 1 full, night 2 with one new document. The offline writer is asked for the changed axes only
(the kept ones named), the review validates on its first round without the reviser, and the judge
grades the changed parts, carrying the others over — the model path's code, on the offline engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import veille.offline.writer
from tests.test_incremental_flow import BUNDLED, NEW
from veille.roles.writer import WriterInput

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]


def _json(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def _roles(folder: Path) -> list[str]:
    lines = (folder / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["role"] for line in lines if line.strip()]


def test_an_offline_night_with_a_new_document_writes_reviews_and_judges_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veille.flows.veille import veille_flow

    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED, corpus, ignore=shutil.ignore_patterns("sources.toml", ".collect-state.json"))
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    asked: list[WriterInput] = []
    write = veille.offline.writer.write

    def recording(data: WriterInput) -> Any:
        asked.append(data)
        return write(data)

    # role_functions imports it when the night's engine is built (on its first answer)
    monkeypatch.setattr(veille.offline.writer, "write", recording)

    def night() -> Path:
        state = veille_flow(corpus=str(corpus), backend="offline", return_state=True)
        assert state.is_completed(), state.message
        return Path(state.result())

    first = night()
    (corpus / "docs" / "doc-90.md").write_text(NEW, encoding="utf-8")
    second = night()

    full, changed = asked[0], asked[-1]
    assert not full.kept_axes and full.previous is None
    assert changed.kept_axes and changed.previous is not None and changed.kept_words > 0
    assert set(changed.axes) | set(changed.kept_axes) == set(full.axes)
    assert len(changed.axes) < len(full.axes)
    assert {f.subtask_id for f in changed.findings} <= set(changed.axes)

    roles = _roles(second)
    assert roles.count("writer") == 1 and roles.count("critic") == 1 and "reviser" not in roles
    assert _json(second, "review.json")["validated"]
    parts = [g for g in _json(second, "grades.json") if str(g.get("target", "")).startswith("part:")]
    carried = [g["target"] for g in parts if g.get("carried_over")]
    judged = [g["target"] for g in parts if not g.get("carried_over")]
    assert carried and judged and "part:conclusions" in judged
    assert len(carried) >= len(changed.kept_axes)  # every kept axis's part is carried over
    assert all(not g.get("carried_over") for g in _json(first, "grades.json"))
