"""End to end through the real google-genai SDK against the loopback fake Gemini server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini
from testkit.flowkit import write_corpus
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.textstats import MODEL_SECTIONS, split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

CANARY = "AIza-test-canary-0123456789-never-logged"


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        fake.responder = gemini_responder()
        yield fake


def test_flow_through_the_real_sdk(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse = tmp_path / "warehouse"
    use_fake_gemini(monkeypatch, server, warehouse, key=CANARY)
    corpus = write_corpus(tmp_path / "corpus")

    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())

    roles = [role_of(r.body) for r in server.requests]
    assert roles.count("planner") == 1 and roles.count("analyst") == 3 and roles.count("writer") == 1
    assert "unknown" not in roles
    assert all(r.headers.get("x-goog-api-key") == CANARY for r in server.requests)
    # Structured output: the SDK sent the role's JSON schema with every request.
    assert all(
        r.body["generationConfig"].get("responseMimeType") == "application/json" for r in server.requests
    )

    calls = read_journal(run_dir / "calls.jsonl")
    assert len(calls) == len(server.requests)
    assert {c.backend for c in calls} == {"gemini"} and not any(c.estimated for c in calls)
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert run["backend"] == "gemini" and run["status"] == "completed"
    assert run["models"]["planner"] == server.requests[0].model

    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert all(split_sections(report).get(name) for name in (*MODEL_SECTIONS, "Sources"))
    # The key reaches the server and nothing else: no file of the run folder or warehouse holds it.
    for path in warehouse.rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path


REFERENCE_DOSSIER = (
    "# Kestrel, Tamaris ou Orvet\n\n## Synthèse\n\nKestrel mène sur le débit. Tamaris coûte plus cher. "
    "Orvet a corrigé sa faille.\n\n## Points clés\n\n- Kestrel : débit mesuré au banc [1].\n\n"
    "## Ce qui reste incertain\n\n- Le coût du support.\n"
)


def test_an_unchanged_rerun_makes_no_request(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With a reference, grading asks the judge: its validated answer is cached like the others.
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse", key=CANARY)
    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "reference").mkdir()
    (corpus / "reference" / "dossier.md").write_text(REFERENCE_DOSSIER, encoding="utf-8")
    (corpus / "reference" / "facts.yaml").write_text("figures: []\n", encoding="utf-8")

    first = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert first.is_completed(), first.message
    roles = [role_of(r.body) for r in server.requests]
    assert roles.count("judge") == 1 and "unknown" not in roles
    first_dir = Path(first.result())
    grades = json.loads((first_dir / "grades.json").read_text(encoding="utf-8"))
    assert not [g for g in grades if (g.get("details") or {}).get("error")]
    sent = len(server.requests)

    second = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert second.is_completed(), second.message
    assert len(server.requests) == sent  # 0 requests: every answer, the judge's included, is cached
    second_dir = Path(second.result())
    # The journal lists model calls made: the task cache served every answer, so there is none.
    assert read_journal(second_dir / "calls.jsonl") == []
    # Nothing changed: the night reuses the first one's dossier as a whole (issue 40 item 4,
    # veille.run.nightskip), whatever the backend: recorded as reused, every grade carried over.
    assert json.loads((second_dir / "run.json").read_text(encoding="utf-8"))["reused_from"] == first_dir.name
    again = json.loads((second_dir / "grades.json").read_text(encoding="utf-8"))
    assert again and all(g["carried_over"] and g["details"]["from_run"] == first_dir.name for g in again)

    def unmarked(g: dict[str, Any]) -> dict[str, Any]:
        details = {k: v for k, v in (g.get("details") or {}).items() if k not in ("carried_over", "from_run")}
        return {**g, "carried_over": False, "details": details}

    assert [unmarked(g) for g in again] == [unmarked(g) for g in grades]
