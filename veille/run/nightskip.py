"""The whole-night skip (issue 40 item 4): a night whose key equals the last completed night's
reuses that night's dossier instead of running its steps again.

A night that completed with a final report and its grades leaves ``night.json`` in its run folder:
its key (veille.run.nightkey), what rendering the report needs (the reviewed dossier, the sources
the writer numbered, the axes' titles, the axes named missing) and the SHA-256 of each file a later
night reuses. Tonight reuses it only when the keys are equal and every one of those files still has
its recorded digest (a file edited, removed or damaged: a full night). The reused night writes
the same plan, findings and review, its report rendered again with tonight's news section (« ce
qui a changé depuis le dossier du … ») and tonight's run facts, the grades marked carried over,
and the alerts that still describe the corpus or the reused dossier (veille/data/night_skip.toml).
It writes its own ``night.json``, so a chain of unchanged nights each reuses the one before.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from veille.alerts import Alert
from veille.dossier import Dossier
from veille.gradestatus import GRADES_FILE
from veille.resources import data_file
from veille.roles.writer import SourceRef
from veille.run.folder import REPORT_FILE, RunFolder
from veille.steps.finalize import FinalReport, finalize_report
from veille.steps.news import Changes

__all__ = [
    "NIGHT_FILE",
    "REUSED_FILES",
    "KeptNight",
    "carried_alerts",
    "carried_grades",
    "kept_night",
    "night_record",
    "render_basis",
    "reused_note",
]

NIGHT_FILE = "night.json"
_FORMAT = 1
# Files of the kept night the reusing night copies or reads: each must keep its recorded digest.
_BASIS = ("title", "dossier", "sources", "axes", "missing_axes")
REUSED_FILES = ("plan.json", "findings.json", "review.json", "alerts.json", GRADES_FILE, REPORT_FILE)


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@cache
def _carried_codes() -> frozenset[str]:
    with data_file("night_skip.toml").open("rb") as handle:
        return frozenset(tomllib.load(handle)["carried"]["codes"])


def render_basis(
    title: str,
    dossier: Dossier,
    sources: Sequence[SourceRef],
    axes: Mapping[str, str],
    missing_axes: Sequence[str],
) -> dict[str, Any]:
    """What rendering the report again needs (veille.steps.finalize.finalize_report's inputs but
    tonight's news): the reviewed dossier, the sources as the writer step numbered them, the axes'
    titles and the axes named missing."""
    return {
        "title": title,
        "dossier": dossier.model_dump(mode="json"),
        "sources": [s.model_dump(mode="json") for s in sources],
        "axes": dict(axes),
        "missing_axes": list(missing_axes),
    }


def night_record(folder: Path, key: str, basis: Mapping[str, Any]) -> Path:
    """Writes ``night.json`` once every other file of the night is written (grades, delivery's
    alerts): the key, the rendering basis (:func:`render_basis`) and the digests of
    :data:`REUSED_FILES` as they are now."""
    record = {
        "format": _FORMAT,
        "key": key,
        "run_id": folder.name,
        **{name: basis[name] for name in _BASIS},
        "files": {name: _sha256(folder / name) for name in REUSED_FILES},
    }
    return RunFolder(folder.parent, folder.name).write_json(NIGHT_FILE, record)


@dataclass(frozen=True)
class KeptNight:
    """A completed night tonight may reuse: its folder, run.json, night.json and digests checked."""

    run_id: str
    folder: Path
    info: Mapping[str, Any]  # its run.json
    record: Mapping[str, Any]  # its night.json

    @property
    def basis(self) -> dict[str, Any]:
        """Its rendering basis (:func:`render_basis`), for tonight's own night.json."""
        return {name: self.record[name] for name in _BASIS}

    def dossier(self) -> Dossier:
        return Dossier.model_validate(self.record["dossier"])

    def final(self, changes: Changes) -> FinalReport:
        """The kept dossier rendered again with tonight's news (nothing touched: no document cited
        only by the news, so no metadata is read)."""
        return finalize_report(
            str(self.record["title"]),
            self.dossier(),
            [SourceRef.model_validate(s) for s in self.record["sources"]],
            dict(self.record["axes"]),
            list(self.record["missing_axes"]),
            changes=changes,
            metadata={},
        )

    def text(self, name: str) -> str:
        return (self.folder / name).read_text(encoding="utf-8")

    def json(self, name: str) -> Any:
        return json.loads(self.text(name))


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def kept_night(runs_dir: Path, previous_run_id: str, key: str) -> KeptNight | None:
    """The previous night as tonight may reuse it, or None: a different or absent key, a night not
    completed, or a reused file missing or changed since that night wrote it."""
    folder = Path(runs_dir) / previous_run_id
    record, info = _load(folder / NIGHT_FILE), _load(folder / "run.json")
    if not isinstance(record, dict) or not isinstance(info, dict):
        return None
    if record.get("format") != _FORMAT or record.get("key") != key or record.get("run_id") != previous_run_id:
        return None
    if info.get("status") != "completed" or info.get("run_id") != previous_run_id:
        return None
    files = record.get("files")
    if not isinstance(files, dict) or set(files) != set(REUSED_FILES) or files.get(REPORT_FILE) is None:
        return None
    if any(name not in record for name in _BASIS):
        return None
    if any(_sha256(folder / name) != digest for name, digest in files.items()):
        return None
    return KeptNight(previous_run_id, folder, info, record)


def carried_alerts(alerts: Sequence[Mapping[str, Any]]) -> list[Alert]:
    """The kept night's alerts that still hold tonight (veille/data/night_skip.toml), in order."""
    codes = _carried_codes()
    return [Alert.model_validate(a) for a in alerts if a.get("code") in codes]


def carried_grades(grades: Sequence[Mapping[str, Any]], origin: str) -> list[dict[str, Any]]:
    """The kept night's grades, each marked carried over from the night that graded it (``origin``
    unless the grade was already carried from an earlier one)."""
    out = []
    for grade in grades:
        details = dict(grade.get("details") or {})
        details.setdefault("from_run", origin)
        details["carried_over"] = True
        out.append({**grade, "carried_over": True, "details": details})
    return out


def reused_note(run_id: str) -> str:
    """What the log and the summary say of a reused night (French: read by the user)."""
    return f"nuit inchangée : dossier du {run_id} repris"
