"""A night delivers its dossier (loopback SMTP + webhook); a refusing server is an alert and the
night completes; the channel's secret reaches no file of the run, no Parquet and no log."""

from __future__ import annotations

import email.header
import json
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from testkit.flowkit import read_json, responder, write_corpus
from testkit.scripted import ScriptedModel, night_on
from tests.mailkit import free_port, smtp_server
from veille.flows.veille import veille_flow

pytestmark = pytest.mark.usefixtures("prefect_harness")

CANARY = "pw-CANARY-delivery-7f3"
DELIVERY_TOML = """link = "https://veille.example.org/{run_id}/report.html"

[email]
to = ["equipe@example.org"]

[[chat]]
name = "equipe"
url_env = "VEILLE_TEST_CHAT"
"""


def _night(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **params: Any) -> tuple[Any, Path]:
    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "delivery.toml").write_text(DELIVERY_TOML, encoding="utf-8")
    warehouse = tmp_path / "warehouse"
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse))
    with night_on(ScriptedModel(function=responder())):
        state = veille_flow(corpus=str(corpus), return_state=True, **params)
    (run_dir,) = (warehouse / "runs").iterdir()
    return state, run_dir


def test_a_night_sends_one_email_and_one_chat_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, httpserver: HTTPServer
) -> None:
    httpserver.expect_oneshot_request("/chat", method="POST").respond_with_data("ok")
    monkeypatch.setenv("VEILLE_TEST_CHAT", f"json://127.0.0.1:{httpserver.port}/chat")
    with smtp_server() as box:
        monkeypatch.setenv("VEILLE_SMTP_URL", box.url())
        state, run_dir = _night(tmp_path, monkeypatch)
    assert state.is_completed(), state.message
    assert not [a for a in read_json(run_dir / "alerts.json") if a["stage"] == "delivery"]
    ((rcpt, message),) = box.messages
    assert rcpt == ["equipe@example.org"]
    subject = str(email.header.make_header(email.header.decode_header(message["Subject"])))
    assert subject.endswith("dossier complet")
    html = next(p for p in message.walk() if p.get_content_type() == "text/html")
    sent = html.get_payload(decode=True).decode("utf-8").replace("\r\n", "\n")  # SMTP lines end in CRLF
    assert sent == (run_dir / "report.html").read_text("utf-8")
    (attached,) = [p for p in message.walk() if p.get_filename()]
    assert attached.get_payload(decode=True).decode("utf-8") == (run_dir / "report.md").read_text("utf-8")
    ((request, _),) = httpserver.log
    text = json.loads(request.get_data())["message"]
    assert "Synthèse : " in text
    assert f"https://veille.example.org/{run_dir.name}/report.html" in text


def test_a_refusing_server_gives_an_alert_and_a_completed_night(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()  # nothing listens there
    monkeypatch.setenv("VEILLE_SMTP_URL", f"mailto://veille:{CANARY}@127.0.0.1:{port}?from=v@example.org")
    monkeypatch.setenv("VEILLE_TEST_CHAT", f"json://u:{CANARY}@127.0.0.1:{port}/chat")
    state, run_dir = _night(tmp_path, monkeypatch)
    assert state.is_completed(), state.message
    assert read_json(run_dir / "run.json")["status"] == "completed"
    delivery = [a for a in read_json(run_dir / "alerts.json") if a["stage"] == "delivery"]
    assert [(a["code"], a["subject"]) for a in delivery] == [
        ("delivery.failed", "e-mail"),
        ("delivery.failed", "chat equipe"),
    ]
    # The alerts reached the warehouse, the secret did not reach anything.
    warehouse = run_dir.parents[1]
    written = [p for p in warehouse.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in written)
    for path in written:
        assert CANARY.encode() not in path.read_bytes(), path
    assert CANARY not in caplog.text


def test_a_partial_night_is_delivered_as_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, httpserver: HTTPServer
) -> None:
    httpserver.expect_oneshot_request("/chat", method="POST").respond_with_data("ok")
    monkeypatch.setenv("VEILLE_TEST_CHAT", f"json://127.0.0.1:{httpserver.port}/chat")
    with smtp_server() as box:
        monkeypatch.setenv("VEILLE_SMTP_URL", box.url())
        state, run_dir = _night(tmp_path, monkeypatch, fail_subtasks=["st-2"])
    assert state.is_failed()
    ((_, message),) = box.messages
    assert str(email.header.make_header(email.header.decode_header(message["Subject"]))).endswith("partiel")
    html = (run_dir / "report.html").read_text("utf-8")
    # The failed axis named as the dossier names it (its question's title), never by its id.
    assert "Dossier partiel" in html and "1 volet(s) sur 3 en échec : Quel est le coût des licences" in html
    assert "en échec : st-2" not in html
