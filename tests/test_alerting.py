"""`veille setup` makes a failed night loud: per watch of prefect.yaml, an automation on Failed and
Crashed flow runs of its deployment that notifies its operators — never its readers (test Prefect
API; the message itself, sent by a real server, is tests/test_operator_server.py's)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from testkit.flowkit import write_corpus
from veille.ops.alerting import FAILED_STATES, automation_name
from veille.ops.watches import read_watches

pytestmark = pytest.mark.usefixtures("prefect_harness")

CANARY = "tok-CANARY-automation"
PREFECT_YAML = """name: veille
deployments:
  - name: veille-infra
    entrypoint: flows.veille:veille_flow
    parameters: {corpus: infra}
  - name: veille-securite
    entrypoint: flows.veille:veille_flow
    parameters: {corpus: securite}
  - name: veille-sans-destinataire
    entrypoint: flows.veille:veille_flow
    parameters: {corpus: vide}
  - name: veille-lecteurs-seuls
    entrypoint: flows.veille:veille_flow
    parameters: {corpus: lecteurs}
"""
# Every watch has readers (a chat channel); the operators are a channel of their own.
READERS = '[[chat]]\nname = "lecteurs"\nurl_env = "VEILLE_CHAT_READERS"\n'


def _checkout(tmp_path: Path) -> Path:
    for name, channel in (("infra", "INFRA"), ("securite", "SECU")):
        corpus = write_corpus(tmp_path / name)
        (corpus / "delivery.toml").write_text(
            f'{READERS}\n[operators]\n[[operators.chat]]\nname = "{name}"\nurl_env = "VEILLE_CHAT_{channel}"\n'
        )
    write_corpus(tmp_path / "vide")
    (write_corpus(tmp_path / "lecteurs") / "delivery.toml").write_text(READERS)  # written before [operators]
    (tmp_path / "prefect.yaml").write_text(PREFECT_YAML, encoding="utf-8")
    return tmp_path / "prefect.yaml"


def test_watches_are_the_deployments_and_their_corpora(tmp_path: Path) -> None:
    watches = read_watches(_checkout(tmp_path), tmp_path / "default")
    assert [(w.deployment, w.corpus_dir) for w in watches] == [
        ("veille-infra", tmp_path / "infra"),
        ("veille-securite", tmp_path / "securite"),
        ("veille-sans-destinataire", tmp_path / "vide"),
        ("veille-lecteurs-seuls", tmp_path / "lecteurs"),
    ]


def test_setup_creates_one_automation_per_watch_idempotently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, httpserver: HTTPServer
) -> None:
    from prefect.blocks.notifications import SlackWebhook
    from prefect.client.orchestration import get_client

    from veille.cli import _register_all, app

    _register_all()
    prefect_yaml = _checkout(tmp_path)
    monkeypatch.setenv("VEILLE_CHAT_INFRA", f"json://u:{CANARY}@127.0.0.1:{httpserver.port}/infra")
    monkeypatch.setenv("VEILLE_CHAT_SECU", f"json://127.0.0.1:{httpserver.port}/secu")
    monkeypatch.setenv("VEILLE_CHAT_READERS", f"json://127.0.0.1:{httpserver.port}/lecteurs")
    # An automation an older setup made for the readers-only watch: it would tell its readers.
    from veille.ops.alerting import Channel, ensure_failure_automation

    with get_client(sync_client=True) as client:
        old = Channel(
            "veille-veille-lecteurs-seuls-chat-lecteurs", f"json://127.0.0.1:{httpserver.port}/lecteurs"
        )
        ensure_failure_automation(client, "veille-lecteurs-seuls", [old])
    args = ["setup", "--deployments", str(prefect_yaml)]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0, second.output
    assert "automation 'veille: veille-infra en échec' (1 channel(s)): created" in first.output
    assert "automation 'veille: veille-infra en échec' (1 channel(s)): unchanged" in second.output
    assert "veille-sans-destinataire: no delivery.toml" in first.output
    assert "veille-lecteurs-seuls: no [operators]" in first.output
    assert "former automation, which notified the readers, is deleted" in first.output
    assert CANARY not in first.output + second.output

    with get_client(sync_client=True) as client:
        (infra,) = client.read_automations_by_name(automation_name("veille-infra"))
        assert len(client.read_automations_by_name(automation_name("veille-securite"))) == 1
        assert not client.read_automations_by_name(automation_name("veille-lecteurs-seuls"))
    # and the block that held the readers' webhook URL is gone with it.
    with pytest.raises(ValueError, match="Unable to find block document"):
        SlackWebhook.load("veille-veille-lecteurs-seuls-chat-lecteurs")
    assert infra.trigger.expect == set(FAILED_STATES)  # type: ignore[union-attr]
    assert infra.trigger.match_related.model_dump() == {  # type: ignore[union-attr]
        "prefect.resource.role": "deployment",
        "prefect.resource.name": "veille-infra",
    }
    (action,) = infra.actions  # the operators' channel only: not the readers' chat
    # The action's block is what the server calls: it reaches the channel of this watch only.
    block = SlackWebhook.load("veille-veille-infra-operators-chat-infra")
    assert CANARY not in repr(block) and CANARY not in json.dumps(block.model_dump(mode="json"))
    httpserver.expect_oneshot_request("/infra", method="POST").respond_with_data("ok")
    block.notify("La veille « veille-infra » a échoué", subject=action.subject)  # type: ignore[union-attr]
    ((request, _),) = httpserver.log
    assert "a échoué" in json.loads(request.get_data())["message"]


def _automation(expect: list[str], body: str = "corps", block: str = "0" * 32) -> object:
    from prefect.events.actions import SendNotification
    from prefect.events.schemas.automations import AutomationCore, EventTrigger, Posture

    return AutomationCore(
        name="veille: x en échec",
        trigger=EventTrigger(
            expect=set(expect),
            match={"prefect.resource.id": "prefect.flow-run.*"},
            match_related={"prefect.resource.role": "deployment", "prefect.resource.name": "x"},
            posture=Posture.Reactive,
            threshold=1,
            within=timedelta(0),
        ),
        actions=[SendNotification(block_document_id=block, subject="s", body=body)],
    )


_EVENTS = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz.-", min_size=1, max_size=24),
    min_size=2,
    max_size=12,
    unique=True,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=_EVENTS, data=st.data())
def test_an_automation_read_back_in_another_set_order_is_unchanged(
    events: list[str], data: st.DataObject
) -> None:
    # The server (another process, another hash seed) returns a set field as a list in its own
    # iteration order: the structure is the same, so a second `veille setup` must say "unchanged".
    from prefect.events.schemas.automations import AutomationCore

    from veille.ops.alerting import same_automation

    wanted = _automation(events)
    stored = json.loads(wanted.model_dump_json())  # type: ignore[attr-defined]
    stored["trigger"]["expect"] = data.draw(st.permutations(events))
    stored["tags"], stored["owner_resource"] = [], None  # defaults the server fills in
    current = AutomationCore.model_validate(stored)
    assert same_automation(current, wanted)  # type: ignore[arg-type]


@given(events=_EVENTS)
def test_a_changed_automation_is_not_the_same(events: list[str]) -> None:
    from veille.ops.alerting import same_automation

    wanted = _automation(events)
    for changed in (
        _automation(events[1:]),
        _automation(events, body="autre corps"),
        _automation(events, block="1" * 32),
    ):
        assert not same_automation(changed, wanted)  # type: ignore[arg-type]
