"""Delivery through Apprise to loopback servers: an SMTP server (aiosmtpd) and webhook receivers.

A channel that refuses is an alert, never an exception; channel URLs (and the passwords in them)
appear in no alert.
"""

from __future__ import annotations

import email.header
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from tests.mailkit import free_port, smtp_server
from veille.delivery.config import DeliveryConfig, DeliveryError, load_delivery
from veille.delivery.send import Dossier, chat_text, deliver

REPORT = """# Comparatif <b>Kestrel</b>

## Synthèse

Kestrel obtient 1 420 tokens/s par GPU [1]. Orvet suit [2].

## Nouveautés depuis le 2 décembre 2026

- Nouveau : « Kestrel 3.5 » (doc-41) [3]

## Points clés

- Kestrel 3.4.2 : 1 420 tokens/s [1].

## Sources

- [1] **doc-01** — a
"""
CANARY = "s3cr3t-CANARY-42"


@pytest.fixture()
def dossier(tmp_path: Path) -> Dossier:
    md, html = tmp_path / "report.md", tmp_path / "report.html"
    md.write_text(REPORT, encoding="utf-8")
    html.write_text("<!DOCTYPE html><html><body><p>Dossier</p></body></html>", encoding="utf-8")
    return Dossier(
        "20261203T020000Z-abcdef", md, html, "Veille : Kestrel — dossier complet", "https://x.example/r"
    )


def _config(**raw: object) -> DeliveryConfig:
    return DeliveryConfig.model_validate(raw)


def test_one_email_with_the_html_body_and_the_markdown_attached(dossier: Dossier) -> None:
    config = _config(email={"to": ["equipe@example.org"]})
    with smtp_server() as box:
        alerts = deliver(config, dossier, {"VEILLE_SMTP_URL": box.url()})
    assert alerts == []
    ((rcpt, message),) = box.messages
    assert rcpt == ["equipe@example.org"]
    assert "Kestrel" in str(email.header.make_header(email.header.decode_header(message["Subject"])))
    parts = {p.get_content_type(): p for p in message.walk() if not p.is_multipart()}
    assert "<p>Dossier</p>" in parts["text/html"].get_payload(decode=True).decode("utf-8")
    (attached,) = [p for p in message.walk() if p.get_filename()]
    assert attached.get_payload(decode=True).decode("utf-8") == REPORT


def test_a_chat_webhook_gets_the_synthesis_the_news_and_the_link(
    dossier: Dossier, httpserver: HTTPServer
) -> None:
    httpserver.expect_oneshot_request("/hook", method="POST").respond_with_data("ok")
    config = _config(chat=[{"name": "equipe", "url_env": "VEILLE_CHAT_EQUIPE"}])
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    assert deliver(config, dossier, {"VEILLE_CHAT_EQUIPE": url}) == []
    ((request, _),) = httpserver.log
    body = json.loads(request.get_data())
    text = body["message"]
    assert "Kestrel obtient 1 420 tokens/s par GPU." in text  # citations dropped: no sources in a chat
    assert "Nouveau : « Kestrel 3.5 » (doc-41)" in text
    assert "https://x.example/r" in text
    assert body["title"] == dossier.subject
    assert dossier.subject not in text  # the title once: Apprise sends it apart (issue 39)


def test_mattermost_webhook_on_loopback(dossier: Dossier, httpserver: HTTPServer) -> None:
    httpserver.expect_oneshot_request("/hooks/abcdefghij0123456789", method="POST").respond_with_data("ok")
    config = _config(chat=[{"name": "mm", "url_env": "MM_URL"}])
    url = f"mmost://127.0.0.1:{httpserver.port}/abcdefghij0123456789"
    assert deliver(config, dossier, {"MM_URL": url}) == []
    ((request, _),) = httpserver.log
    assert "Kestrel obtient" in json.loads(request.get_data())["text"]


def test_a_refusing_server_is_an_alert_that_names_the_channel_not_its_secret(dossier: Dossier) -> None:
    port = free_port()  # nobody listens: connection refused
    config = _config(
        email={"to": ["a@example.org"]}, chat=[{"name": "equipe", "url_env": "VEILLE_CHAT_EQUIPE"}]
    )
    environ = {
        "VEILLE_SMTP_URL": f"mailto://veille:{CANARY}@127.0.0.1:{port}?from=veille@example.org",
        "VEILLE_CHAT_EQUIPE": f"json://user:{CANARY}@127.0.0.1:{port}/hook",
    }
    alerts = deliver(config, dossier, environ)
    assert [(a.code, a.severity, a.subject) for a in alerts] == [
        ("delivery.failed", "error", "e-mail"),
        ("delivery.failed", "error", "chat equipe"),
    ]
    assert CANARY not in json.dumps([a.model_dump() for a in alerts])
    assert "VEILLE_SMTP_URL" in alerts[0].message


def test_a_missing_variable_is_a_warning(dossier: Dossier) -> None:
    alerts = deliver(_config(email={"to": ["a@example.org"]}), dossier, {})
    assert [(a.code, a.severity) for a in alerts] == [("delivery.unconfigured", "warning")]


def test_delivery_toml_errors_name_the_file_and_field_never_the_value(tmp_path: Path) -> None:
    assert load_delivery(tmp_path) is None  # optional
    (tmp_path / "delivery.toml").write_text(
        f'[email]\nto = ["equipe@example.org"]\nserver_env = "mailtos://u:{CANARY}@smtp.example.org"\n'
    )
    with pytest.raises(DeliveryError) as caught:
        load_delivery(tmp_path)
    assert "delivery.toml" in str(caught.value) and "email.server_env" in str(caught.value)
    assert CANARY not in str(caught.value)
    (tmp_path / "delivery.toml").write_text('[email]\nto = ["not an address"]\n')
    with pytest.raises(DeliveryError, match=r"email\.to"):
        load_delivery(tmp_path)


@given(st.text(min_size=1, max_size=80))
def test_chat_text_keeps_model_text_as_text(text: str) -> None:
    """Whatever the synthesis holds, the chat message is built as plain text around it (Apprise
    escapes TEXT per service) and always ends with the code-given link."""
    line = " ".join(text.split()) or "x"
    body = chat_text(f"# T\n\n## Synthèse\n\n{line}\n", "https://x.example/r")
    assert body.startswith("Synthèse : ") and body.endswith("Dossier : https://x.example/r")


def test_operators_are_optional_and_checked_like_the_readers(tmp_path: Path) -> None:
    # A delivery.toml written before [operators] stays valid: no operators, nobody told of a failure.
    (tmp_path / "delivery.toml").write_text('[email]\nto = ["equipe@example.org"]\n')
    loaded = load_delivery(tmp_path)
    assert loaded is not None and loaded.operators is None
    for body, field in (
        ("[operators]\n", "operators"),  # nobody: refused rather than silently notifying no one
        ('[operators]\nto = ["pas une adresse"]\n', "operators.to"),
        (
            f'[operators]\nto = ["a@example.org"]\nserver_env = "mailto://u:{CANARY}@h"\n',
            "operators.server_env",
        ),
        (f'[[operators.chat]]\nname = "astreinte"\nurl_env = "json://{CANARY}@h"\n', "operators.chat"),
    ):
        (tmp_path / "delivery.toml").write_text(body)
        with pytest.raises(DeliveryError) as caught:
            load_delivery(tmp_path)
        assert field in str(caught.value) and CANARY not in str(caught.value), str(caught.value)
    (tmp_path / "delivery.toml").write_text(
        '[operators]\nto = ["astreinte@example.org"]\n[[operators.chat]]\nname = "ops"\nurl_env = "VEILLE_OPS"\n'
    )
    operators = load_delivery(tmp_path).operators  # type: ignore[union-attr]
    assert operators is not None and operators.to == ["astreinte@example.org"]
    assert operators.server_env == "VEILLE_SMTP_URL" and [c.url_env for c in operators.chat] == ["VEILLE_OPS"]


_NAMES = st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=3)


@given(readers=_NAMES, operators=_NAMES, to=st.booleans(), reader_mail=st.booleans())
def test_a_failure_is_sent_to_operators_never_to_readers(
    readers: list[str], operators: list[str], to: bool, reader_mail: bool
) -> None:
    """Whatever the channels, the failure automation's channels are the operators' ones only."""
    from veille.ops.alerting import channel_urls

    raw: dict[str, object] = {"chat": [{"name": n, "url_env": f"READER_{n.upper()}"} for n in readers]}
    if reader_mail:
        raw["email"] = {"to": ["lectrice@example.org"], "server_env": "READER_SMTP"}
    if operators or to:
        raw["operators"] = {
            "to": ["astreinte@example.org"] if to else [],
            "server_env": "OPS_SMTP",
            "chat": [{"name": n, "url_env": f"OPS_{n.upper()}"} for n in operators],
        }
    variables = [f"READER_{n.upper()}" for n in readers] + [f"OPS_{n.upper()}" for n in operators]
    environ = {v: f"json://127.0.0.1/{v}" for v in variables} | {
        "READER_SMTP": "mailto://127.0.0.1/READER_SMTP",
        "OPS_SMTP": "mailto://127.0.0.1/OPS_SMTP",
    }
    channels, missing = channel_urls("veille-x", _config(**raw), environ)
    assert not missing
    assert all("READER" not in c.url and "lectrice" not in c.url for c in channels)
    assert len(channels) == len(operators) + int(to)
    assert all(c.block_name.startswith("veille-veille-x-operators-") for c in channels)


def test_operators_urls_are_masked_from_the_first_line(tmp_path: Path) -> None:
    from veille.delivery.config import register_delivery_secrets
    from veille.secrets import scrub_text

    (tmp_path / "delivery.toml").write_text('[[operators.chat]]\nname = "ops"\nurl_env = "VEILLE_OPS"\n')
    url = f"json://u:{CANARY}@127.0.0.1/ops"
    assert register_delivery_secrets(tmp_path, {"VEILLE_OPS": url}) == 1
    assert CANARY not in scrub_text(f"envoi vers {url} refusé")


NEWS_REPORT = """# T

## Synthèse

Kestrel mène [1].

## Nouveautés depuis le 2 décembre 2026

Comparé au dossier du 2 décembre 2026 (exécution r0) : 1 document(s) nouveau(x), 0 modifié(s), 0 retiré(s).

### Documents nouveaux, modifiés ou retirés

- Nouveau : « Kestrel 3.5 » (2026-12-01, note) [2]

### Points clés nouveaux ou modifiés

{points}

## Points clés

- Kestrel 3.4.2 : 1 420 tokens/s [1].

## Sources

- [1] **doc-01** — a
"""


def test_the_news_sub_headings_are_headings_not_bullets() -> None:
    """« Points clés nouveaux ou modifiés » arrived as a bullet item of the webhook's message."""
    body = chat_text(NEWS_REPORT.format(points="- Kestrel 3.5 : 1 610 tokens/s [2]."), "https://x.example/r")
    lines = body.splitlines()
    assert "Points clés nouveaux ou modifiés :" in lines
    assert "Documents nouveaux, modifiés ou retirés :" in lines
    assert not [
        line for line in lines if line.startswith("- ") and ("Points clés" in line or "Documents" in line)
    ]
    assert "- Nouveau : « Kestrel 3.5 » (2026-12-01, note)" in lines
    assert "- Kestrel 3.5 : 1 610 tokens/s." in lines
    assert lines[lines.index("Points clés nouveaux ou modifiés :") + 1] == "- Kestrel 3.5 : 1 610 tokens/s."
    assert "Comparé au dossier du 2 décembre 2026 (exécution r0)" in body
    assert "Points clés :" not in body  # the dossier's own key points stay in the dossier


@given(st.integers(0, 30))
def test_the_news_teaser_shows_at_most_twelve_items_and_counts_the_rest(points: int) -> None:
    text = "\n".join(f"- Point {i} [1]." for i in range(points))
    body = chat_text(NEWS_REPORT.format(points=text or "Aucun point clé nouveau ou modifié."), "https://x/r")
    bullets = [line for line in body.splitlines() if line.startswith("- ") and "… et" not in line]
    total = points + 1  # the new document's line
    assert len(bullets) == min(total, 12)
    assert (f"- … et {total - 12} autre(s) dans le dossier" in body) == (total > 12)
