"""Tasks of the whole-night skip (issue 40 item 4): the night's key and the kept night it may reuse,
the reused night's run folder, and the record a completed night leaves for the next one. The pure
functions are veille.run.nightkey and veille.run.nightskip."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect.cache_policies import NO_CACHE

from veille.alerts import Alert
from veille.backends import backend_version
from veille.delivery.header import report_page
from veille.delivery.html import REPORT_HTML_FILE
from veille.gradestatus import GRADES_FILE
from veille.run.folder import RunFolder, RunInfo
from veille.run.inputs import CorpusInputs
from veille.run.nightkey import code_tree_digest, never_skip, night_key
from veille.run.nightskip import KeptNight, carried_grades, kept_night, night_record
from veille.settings import Settings
from veille.steps.finalize import FinalReport
from veille.steps.headings import axis_anchors
from veille.steps.news import Changes
from veille.tasks.datatask import task

__all__ = ["NightReuse", "night_reuse", "record_night", "write_reused"]


@dataclass(frozen=True)
class NightReuse:
    """Tonight's key (None when the night is never skipped: ``why``), and the night it reuses."""

    key: str | None
    kept: KeptNight | None = None
    why: str = ""  # why not reused, for the log


@task(name="night-key", cache_policy=NO_CACHE)  # digests of what the skipped steps would read
def night_reuse(
    settings: Settings,
    drill: Sequence[str],
    attempt: int,
    catalogue: Any,
    inputs: CorpusInputs,
    changes: Changes,
) -> NightReuse:
    """Tonight's key and, when it equals the last completed night's and that night's files are
    intact, that night (veille.run.nightskip.kept_night)."""
    if (never := never_skip(settings, drill, attempt)) is not None:
        return NightReuse(None, why=never)
    key = night_key(
        settings=settings,
        snapshot=inputs.snapshot,
        catalogue=catalogue,
        request=inputs.request,
        reference=inputs.reference,
        grid=inputs.grid,
        backends={settings.role_provider(r): backend_version(settings, r) for r in settings.roles},
        code=code_tree_digest(),
    )
    previous = changes.previous
    if previous is None or changes.touched or changes.removed or changes.alerts:
        return NightReuse(key, why="documents changed" if previous else "no previous dossier")
    kept = kept_night(settings.runs_dir, previous.run_id, key)
    return NightReuse(key, kept, "" if kept else f"inputs or files differ from {previous.run_id}")


@task(name="outputs-reused", cache_policy=NO_CACHE)  # a side effect (files) on every reused night
def write_reused(
    folder: RunFolder,
    info: RunInfo,
    kept: KeptNight,
    final: FinalReport,
    alerts: Sequence[Alert],
    documents: Sequence[tuple[str, str]],
) -> Path:
    """The run folder of a reused night: the kept plan, findings and review as they were, tonight's
    report and page, the grades carried over, tonight's alerts, run.json last (its night.json is
    written once delivery is done: record_night)."""
    folder.create()
    folder.write_documents([{"id": i, "content_hash": h} for i, h in documents])
    for name in ("plan.json", "findings.json", "review.json"):
        folder.write_text(name, kept.text(name))
    folder.write_sources(final.sources)
    folder.write_alerts(alerts)
    folder.write_report(final.markdown)
    findings = kept.json("findings.json")
    questions = {sid: b.get("question", "") for sid, b in findings.items() if b.get("status") == "ok"}
    page = report_page(
        info,
        [],  # no model call
        final.markdown,
        final.sources,
        documents_read=len(documents),
        failed_axes=[],  # the kept night completed: no branch failed
        dossier=kept.dossier(),
        anchors=axis_anchors(questions),
    )
    folder.write_text(REPORT_HTML_FILE, page)
    if (kept.folder / GRADES_FILE).exists():
        folder.write_json(GRADES_FILE, carried_grades(kept.json(GRADES_FILE), kept.run_id))
    folder.write_run(info)
    return folder.path


def record_night(folder: Path, key: str, basis: Mapping[str, Any]) -> Path:
    """night.json of a night that completed with its report, once every other file is written
    (veille.run.nightskip.night_record): the next unchanged night may reuse this one. Not a task:
    one small file written, like run.json's last lines."""
    return night_record(folder, key, basis)
