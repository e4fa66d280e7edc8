"""Send a night's dossier to the channels of ``delivery.toml`` through Apprise.

Apprise (already a dependency of Prefect) speaks SMTP and the chat webhooks (Slack, Teams,
Mattermost, generic JSON…) so no client is written here. A channel that fails is an alert, never
an exception: the night is complete whatever the mail server says. Channel URLs come from the
environment and appear nowhere else: alerts name the channel and the variable, Apprise's own log
lines (which may quote a host or a recipient) are captured and dropped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from veille.alerts import Alert
from veille.delivery.blocks import Block, news_section, parse_report, synthesis_text
from veille.delivery.config import DeliveryConfig
from veille.plaintext import md_unescape
from veille.secrets import scrub_text

__all__ = ["Dossier", "chat_text", "deliver", "with_recipients"]

_CITES_RE = re.compile(r"\s*(?:\[\d{1,4}\])+")
_NEWS_ITEMS = 12  # a chat message is a teaser: the dossier has the rest


@dataclass(frozen=True)
class Dossier:
    """What is sent: the run folder's report.md and report.html, and the header facts."""

    run_id: str
    markdown_path: Path
    html_path: Path
    subject: str
    link: str


def chat_text(markdown: str, link: str) -> str:
    """Plain text (Apprise escapes it per service): synthesis, Nouveautés, link. The subject is the
    message's title (Apprise puts it first where a service has no title), never repeated here."""
    _, sections = parse_report(markdown)
    lines: list[str] = []
    if synthesis := synthesis_text(sections):
        lines += ["Synthèse : " + _plain(synthesis), ""]
    if (news := news_section(sections)) is not None:
        lines.append(news.title + " :")
        lines += _news_lines(news.blocks)
        lines.append("")
    lines.append(f"Dossier : {link}")
    return "\n".join(lines)


def _plain(text: str) -> str:
    return md_unescape(_CITES_RE.sub("", text).strip())


def _news_lines(blocks: list[Block]) -> list[str]:
    """The news section as report.md shapes it: a sub-heading (« Points clés nouveaux ou modifiés »)
    is a heading line, not a bullet; items are bullets (at most :data:`_NEWS_ITEMS`); text is text."""
    lines: list[str] = []
    items = [i for i, b in enumerate(blocks) if b.kind == "item"]
    end = (
        items[_NEWS_ITEMS] if len(items) > _NEWS_ITEMS else len(blocks)
    )  # a teaser: the dossier has the rest
    for block in blocks[:end]:
        if block.kind == "item":
            lines.append(f"- {_plain(block.text)}")
        elif block.kind == "h3":
            lines += ["", _plain(block.text) + " :"]
        else:
            lines.append(_plain(block.text))
    if len(items) > _NEWS_ITEMS:
        lines.append(f"- … et {len(items) - _NEWS_ITEMS} autre(s) dans le dossier")
    return lines


def _alert(code: str, severity: str, message: str, subject: str) -> Alert:
    return Alert(code=code, severity=severity, stage="delivery", message=message, subject=subject)  # type: ignore[arg-type]


def _send(url: str, *, title: str, body: str, html: bool, attach: Path | None) -> bool:
    # Imported here: only a corpus with delivery.toml sends (apprise and its plugins: ~0.1 s of CPU
    # at import, which every night paid, issue 40 item 1).
    import apprise

    sender = apprise.Apprise()
    with apprise.LogCapture(level=logging.DEBUG):  # dropped: may quote hosts or recipients
        quiet = logging.getLogger("apprise")
        propagate, quiet.propagate = quiet.propagate, False
        try:
            if not sender.add(url):
                return False
            kind = apprise.NotifyFormat.HTML if html else apprise.NotifyFormat.TEXT
            files = apprise.AppriseAttachment(str(attach)) if attach is not None else None
            # What leaves the machine is scrubbed like every file (the URL itself is the channel's).
            return bool(
                sender.notify(body=scrub_text(body), title=scrub_text(title), body_format=kind, attach=files)
            )
        finally:
            quiet.propagate = propagate


def with_recipients(url: str, to: list[str]) -> str:
    joined = ",".join(quote(a, safe="@+") for a in to)
    return f"{url}{'&' if '?' in url else '?'}to={joined}"


def deliver(config: DeliveryConfig, dossier: Dossier, environ: Mapping[str, str]) -> list[Alert]:
    """One attempt per channel; returns the alerts (none when every channel took the dossier)."""
    alerts: list[Alert] = []
    channels: list[tuple[str, str, bool]] = []  # (label, variable, is e-mail)
    if config.email is not None:
        channels.append(("e-mail", config.email.server_env, True))
    channels += [(f"chat {c.name}", c.url_env, False) for c in config.chat]
    markdown = dossier.markdown_path.read_text(encoding="utf-8")
    for label, variable, is_email in channels:
        url = environ.get(variable, "").strip()
        if not url:
            alerts.append(
                _alert(
                    "delivery.unconfigured",
                    "warning",
                    f"{label} : variable {variable} absente ou vide",
                    label,
                )
            )
            continue
        try:
            if is_email and config.email is not None:
                ok = _send(
                    with_recipients(url, config.email.to),
                    title=dossier.subject,
                    body=dossier.html_path.read_text(encoding="utf-8"),
                    html=True,
                    attach=dossier.markdown_path,
                )
            else:
                ok = _send(
                    url,
                    title=dossier.subject,
                    body=chat_text(markdown, dossier.link),
                    html=False,
                    attach=None,
                )
        except Exception as exc:  # a channel never fails the night; the message may quote the URL
            ok, why = False, type(exc).__name__
        else:
            why = "refusé ou injoignable"
        if not ok:
            alerts.append(
                _alert(
                    "delivery.failed",
                    "error",
                    f"{label} ({variable}) : envoi du dossier en échec ({why})",
                    label,
                )
            )
    return alerts
