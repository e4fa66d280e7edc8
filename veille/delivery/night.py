"""A night's delivery: read ``delivery.toml``, send report.html / report.md, alerts for what failed."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from veille.alerts import Alert
from veille.delivery.config import DeliveryError, load_delivery
from veille.delivery.html import REPORT_HTML_FILE
from veille.delivery.send import Dossier, deliver
from veille.run.folder import REPORT_FILE, RunInfo

__all__ = ["deliver_night", "dossier_link"]


def dossier_link(template: str | None, run_id: str, flow_run_id: str | None, html_path: Path) -> str:
    """The link a chat message carries: ``template`` with ``{run_id}``, else the flow run in the
    Prefect UI (PREFECT_UI_URL), else the page on the worker's disk."""
    if template:
        return template.replace("{run_id}", run_id)
    ui = os.environ.get("PREFECT_UI_URL", "").rstrip("/")
    if ui and flow_run_id:
        return f"{ui}/runs/flow-run/{flow_run_id}"
    return html_path.resolve().as_uri()


def deliver_night(
    corpus_dir: Path, run_dir: Path, info: RunInfo, environ: Mapping[str, str] | None = None
) -> list[Alert]:
    """Alerts only: a missing, invalid or refused channel never fails the night."""
    try:
        config = load_delivery(corpus_dir)
    except DeliveryError as exc:  # names the file and the field, never a value
        return [Alert(code="delivery.config_invalid", severity="error", stage="delivery", message=str(exc))]
    markdown, html = run_dir / REPORT_FILE, run_dir / REPORT_HTML_FILE
    if config is None or not markdown.exists() or not html.exists():
        return []
    state = "complet" if info.status == "completed" and not info.subtasks_failed else "partiel"
    day = info.run_id[:4] + "-" + info.run_id[4:6] + "-" + info.run_id[6:8]
    dossier = Dossier(
        run_id=info.run_id,
        markdown_path=markdown,
        html_path=html,
        subject=f"Veille : {' '.join(info.request_title.split())} — {day} — dossier {state}",
        link=dossier_link(config.link, info.run_id, info.flow_run_id, html),
    )
    return deliver(config, dossier, os.environ if environ is None else environ)
