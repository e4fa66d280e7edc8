"""``--web`` with the offline engine (issue 14): there is no web, so the run goes on from the corpus
alone with one ``web.offline`` warning (the choice documented in docs/pipeline.md, « Web research »):
a scheduled deployment with web on still delivers its dossier when no key is configured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testkit.flowkit import write_corpus
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.settings import Settings

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]


def _run(tmp_path: Path, corpus: Path, name: str, **params: Any) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / name))
        state = veille_flow(corpus=str(corpus), backend="offline", **params, return_state=True)
    assert state.is_completed(), state.message
    return Path(state.result())


def test_offline_web_runs_corpus_only_with_one_warning(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    plain = _run(tmp_path, corpus, "plain")
    web = _run(tmp_path, corpus, "web", web=True)
    assert (web / "report.md").read_text("utf-8") == (plain / "report.md").read_text("utf-8")
    assert (web / "sources.json").read_text("utf-8") == (plain / "sources.json").read_text("utf-8")
    codes = [a["code"] for a in json.loads((web / "alerts.json").read_text("utf-8"))]
    plain_codes = [a["code"] for a in json.loads((plain / "alerts.json").read_text("utf-8"))]
    assert sorted(codes) == sorted([*plain_codes, "web.offline"])
    assert not [c for c in read_journal(web / "calls.jsonl") if c.role == "researcher"]
    run = json.loads((web / "run.json").read_text("utf-8"))
    assert run["settings"]["web"] is True and run["status"] == "completed"


def test_web_is_a_setting_the_cli_and_the_flow_set(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings.from_params().web is False
    assert Settings.from_params(web=True).web is True
    monkeypatch.setenv("VEILLE_WEB", "true")
    assert Settings.from_params().web is True  # web=False means "not forced"
    monkeypatch.setenv("VEILLE_WEB_BUDGET", "2")
    assert Settings.from_params().web_budget == 2


def test_veille_run_takes_web_to_the_flow_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    import veille.flows.veille
    import veille.ops.ephemeral
    from veille.cli import run as run_commands

    app = typer.Typer()  # its own app: veille.cli's registers its commands only in main()
    run_commands.register(app)

    seen: list[Settings] = []

    class _Stop(Exception):
        pass

    def fake_flow(*, return_state: bool, **params: Any) -> None:
        seen.append(Settings.from_params(**params))
        raise _Stop  # the flow itself is covered above: only what the CLI hands it matters here

    monkeypatch.setattr(veille.flows.veille, "veille_flow", fake_flow)
    monkeypatch.setattr(veille.ops.ephemeral, "start_temporary_api", lambda: None)
    CliRunner().invoke(app, ["run", "--web", "--backend", "offline"])
    CliRunner().invoke(app, ["run", "--backend", "offline"])
    assert [s.web for s in seen] == [True, False]
