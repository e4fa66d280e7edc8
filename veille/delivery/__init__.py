"""Delivery of a night's dossier: report.html (escaped by construction) and the channels of
``<corpus>/delivery.toml`` (e-mail, chat) through Apprise. A failed delivery is an alert."""

from __future__ import annotations

from veille.delivery.config import DeliveryConfig, DeliveryError, load_delivery
from veille.delivery.html import REPORT_HTML_FILE, ReportHeader, render_report_html

__all__ = [
    "REPORT_HTML_FILE",
    "DeliveryConfig",
    "DeliveryError",
    "ReportHeader",
    "load_delivery",
    "render_report_html",
]
