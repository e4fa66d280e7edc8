"""Reliability rows: tests of the fault matrix record what they observed; the run writes docs/reliability.md.

A test takes the ``reliability`` fixture and calls ``reliability.record(fault, expected, observed)`` after its
assertions passed (a failing test records nothing). Each pytest process (xdist workers included) appends JSON
lines to ``ROWS_DIR``; the controlling process merges them into docs/reliability.md at the end of the session,
replacing the rows of the tests that ran and keeping the others, so running one test does not wipe the table.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["DOC_PATH", "ROWS_DIR", "Recorder", "ReliabilityRow", "write_table"]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DOC_PATH = PROJECT_ROOT / "docs" / "reliability.md"
ROWS_DIR = PROJECT_ROOT / ".pytest_cache" / "reliability-rows"

HEADER = """# Reliability: the fault matrix

This table is written by the test run itself (`make test` and `make test-process`, or `.venv/bin/pytest tests/`):
each row is recorded by the named test after its assertions passed, so a row here means the behaviour was observed,
not intended. Rows of tests that did not run in the last session are kept from earlier runs.

| fault | expected behaviour | observed | test |
|---|---|---|---|
"""


@dataclass(frozen=True)
class ReliabilityRow:
    fault: str
    expected: str
    observed: str
    test: str


class Recorder:
    def __init__(self, test_id: str) -> None:
        self._test_id = test_id

    def record(self, fault: str, expected: str, observed: str) -> None:
        ROWS_DIR.mkdir(parents=True, exist_ok=True)
        row = ReliabilityRow(fault=fault, expected=expected, observed=observed, test=self._test_id)
        path = ROWS_DIR / f"rows-{os.getpid()}.jsonl"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(row), ensure_ascii=False) + "\n")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _read_existing() -> list[ReliabilityRow]:
    if not DOC_PATH.exists():
        return []
    rows = []
    for line in DOC_PATH.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ") or line.startswith(("| fault |", "|---")):
            continue
        cells = [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 4:
            rows.append(ReliabilityRow(cells[0], cells[1], cells[2], cells[3].strip("`")))
    return rows


def write_table() -> int:
    """Merge this session's rows into docs/reliability.md; returns how many rows this session recorded."""
    fresh: list[ReliabilityRow] = []
    if ROWS_DIR.exists():
        for path in sorted(ROWS_DIR.glob("rows-*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    fresh.append(ReliabilityRow(**json.loads(line)))
    if not fresh:
        return 0
    ran = {row.test for row in fresh}
    kept = [row for row in _read_existing() if row.test not in ran]
    merged = {(r.fault, r.test): r for r in [*kept, *fresh]}
    lines = [
        f"| {_cell(r.fault)} | {_cell(r.expected)} | {_cell(r.observed)} | `{r.test}` |"
        for r in sorted(merged.values(), key=lambda r: (r.fault.lower(), r.test))
    ]
    DOC_PATH.parent.mkdir(parents=True, exist_ok=True)
    DOC_PATH.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    return len(fresh)


def clear_rows() -> None:
    if ROWS_DIR.exists():
        for path in ROWS_DIR.glob("rows-*.jsonl"):
            path.unlink()
