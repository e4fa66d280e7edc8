"""The run folder (``<warehouse>/runs/<run_id>/``): machine-readable outputs of one run.

Contract shared with the graders and the warehouse (docs/pipeline.md): run.json, plan.json,
findings.json, sources.json, review.json, alerts.json, calls.jsonl (appended by the model layer
as calls happen), report.md, report.html (the same dossier as a self-contained page),
documents.json. Every file but calls.jsonl is written atomically
(temporary file in the same directory, then ``os.replace``), so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from veille.alerts import Alert
from veille.oserrors import writing
from veille.roles.planner import Plan
from veille.roles.writer import SourceRef
from veille.secrets import scrub_text

__all__ = [
    "CALLS_FILE",
    "OUTPUT_FILES",
    "REPORT_FILE",
    "RunFolder",
    "RunInfo",
    "mark_failed",
    "new_run_id",
    "note_run_folder",
    "run_date",
    "run_folder_of",
]

CALLS_FILE = "calls.jsonl"
REPORT_FILE = "report.md"
# What the flow's last log line lists for people (the full contract is in the module docstring).
OUTPUT_FILES = (
    REPORT_FILE,
    "report.html",
    "plan.json",
    "findings.json",
    "review.json",
    "alerts.json",
    CALLS_FILE,
)
_RUN_FOLDER_NOTE = "run folder: "


def new_run_id(now: datetime | None = None) -> str:
    """``YYYYMMDDTHHMMSSZ-xxxxxx``: UTC start time + 6 random hex characters."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def note_run_folder(error: BaseException, path: Path) -> None:
    """Attach the run folder to an exception (PEP 678 note), so the CLI can show what was written."""
    error.add_note(f"{_RUN_FOLDER_NOTE}{path}")


def run_folder_of(error: BaseException) -> Path | None:
    """The run folder noted on ``error`` by :func:`note_run_folder`, if any."""
    for note in getattr(error, "__notes__", []):
        if note.startswith(_RUN_FOLDER_NOTE):
            return Path(note.removeprefix(_RUN_FOLDER_NOTE))
    return None


def run_date(run_id: str) -> str:
    """The run's UTC start date (``YYYY-MM-DD``, the warehouse's hive partition)."""
    stamp = run_id.split("-", 1)[0]
    try:
        parsed = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ")
    except ValueError as exc:
        raise ValueError(f"run id {run_id!r}: expected YYYYMMDDTHHMMSSZ-xxxxxx") from exc
    return parsed.strftime("%Y-%m-%d")


class RunInfo(BaseModel):
    """run.json."""

    run_id: str
    flow_run_id: str | None = None
    attempt: int | None = None  # the flow run's attempt (Prefect's run count): a Retry is attempt 2
    deployment: str | None = None
    started_at: str
    finished_at: str
    status: Literal["completed", "failed"]
    corpus_dir: str
    request_title: str
    backend: str
    models: dict[str, str]
    validated: bool
    rounds: int
    subtasks_total: int
    subtasks_failed: int
    settings: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    # Steps whose model failed and whose part code built instead ("plan", "writer"): the dossier
    # exists, but it was not written by the model (alerts plan.code_plan, write.rendered_by_code).
    rendered_by_code: list[str] = Field(default_factory=list)
    # An unchanged night (veille.run.nightskip): the night whose steps produced the dossier it
    # reused instead of running them; None when the night ran its steps.
    reused_from: str | None = None


def _write_atomic(path: Path, text: str) -> None:
    with writing(path, "writing a run-folder file"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(scrub_text(text))  # every run-folder file: one scrubbing step
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


class RunFolder:
    """Writes the files of one run folder."""

    def __init__(self, runs_dir: Path, run_id: str) -> None:
        self.run_id = run_id
        self.path = runs_dir / run_id

    @property
    def calls_path(self) -> Path:
        return self.path / CALLS_FILE

    @property
    def report_path(self) -> Path:
        return self.path / REPORT_FILE

    def create(self) -> RunFolder:
        self.path.mkdir(parents=True, exist_ok=True)
        return self

    def write_json(self, name: str, data: Any) -> Path:
        path = self.path / name
        _write_atomic(path, _dump(data))
        return path

    def write_text(self, name: str, text: str) -> Path:
        path = self.path / name
        _write_atomic(path, text)
        return path

    # --- the contract's files ---
    def write_plan(self, plan: Plan, *, basis: str = "", request: Mapping[str, Any] | None = None) -> Path:
        return self.write_json(
            "plan.json",
            {
                "sub_tasks": [
                    {"id": s.id, "question": s.question, "doc_ids": s.doc_ids}
                    | ({"flags": dict(s.flags)} if s.flags else {})
                    # What the branch's passages are ranked by, and the sections it reads of a
                    # document another branch reads whole (issue 37, veille.steps.plan_reading).
                    | ({"search_terms": list(s.search_terms)} if s.search_terms else {})
                    | ({"passages": dict(s.passages)} if s.passages else {})
                    for s in plan.sub_tasks
                ],
                "excluded": list(plan.excluded),
                # Why each excluded document reads in no sub-task (docs/pipeline.md, "Plan").
                "exclusions": [e.model_dump() for e in plan.exclusions],
                # What the plan answers besides the catalogue: a later night may reuse it (issue 13).
                "basis": basis,
            }
            # What each axis reads, the same-subject groups, what was not read (issue 37).
            | ({"reading": plan.reading} if plan.reading else {})
            # The request read once: axes, options, period, language, kind (docs/pipeline.md).
            | ({"request": dict(request)} if request is not None else {}),
        )

    def write_findings(self, branches: Mapping[str, Mapping[str, Any]]) -> Path:
        return self.write_json("findings.json", dict(branches))

    def write_sources(self, sources: Sequence[SourceRef]) -> Path:
        return self.write_json("sources.json", [s.model_dump() for s in sources])

    def write_review(self, validated: bool, rounds: Sequence[Mapping[str, Any]]) -> Path:
        return self.write_json("review.json", {"validated": validated, "rounds": list(rounds)})

    def write_alerts(self, alerts: Sequence[Alert]) -> Path:
        return self.write_json("alerts.json", [a.model_dump() for a in alerts])

    def write_documents(self, snapshot: Sequence[Mapping[str, Any]]) -> Path:
        return self.write_json("documents.json", list(snapshot))

    def write_report(self, markdown: str) -> Path:
        return self.write_text(REPORT_FILE, markdown)

    def write_run(self, info: RunInfo) -> Path:
        return self.write_json("run.json", info.model_dump())


def mark_failed(run_dir: Path, error: str) -> bool:
    """Set run.json's status to ``failed`` with ``error``: the process fails after writing its report
    (recording, a full disk), so the run must not read ``completed``. On a full disk the atomic rewrite
    cannot get a block; the same bytes' length is then written in place (``failed`` is shorter than
    ``completed``, the error is cut to fit). Returns False when run.json is absent or not a run."""
    path = Path(run_dir) / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    data.update(status="failed", error=error[:500])
    try:
        _write_atomic(path, _dump(data))
        return True
    except OSError:
        pass
    size = path.stat().st_size
    data["error"] = None
    base = len(json.dumps(data, ensure_ascii=False).encode("utf-8"))
    data["error"] = error[: max(0, (size - base - 8) // 4)] or None
    text = json.dumps(data, ensure_ascii=False).encode("utf-8")
    if len(text) > size:
        return False
    with path.open("r+b") as handle:  # overwrites existing blocks only: no new block needed
        handle.write(text.ljust(size, b" "))
    return True
