from pathlib import Path

import pytest

from tests import reliability as rel


def test_rows_are_merged_into_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rel, "ROWS_DIR", tmp_path / "rows")
    monkeypatch.setattr(rel, "DOC_PATH", tmp_path / "reliability.md")
    rel.Recorder("tests/a.py::test_old").record("old fault", "retry", "retried")
    assert rel.write_table() == 1
    rel.clear_rows()
    rel.Recorder("tests/b.py::test_new").record("pipe | fault", "stop", "stopped")
    assert rel.write_table() == 1
    text = (tmp_path / "reliability.md").read_text(encoding="utf-8")
    # The earlier row survives, the new one is added, and a pipe in a cell does not break the table.
    assert "| old fault | retry | retried | `tests/a.py::test_old` |" in text
    assert "pipe \\| fault" in text
    assert [r.fault for r in rel._read_existing()] == ["old fault", "pipe | fault"]
