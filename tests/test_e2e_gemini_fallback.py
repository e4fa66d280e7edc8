"""Issue 23 item 1 through the real google-genai SDK against the fake Gemini server: whatever the
planner or the writer answers, the night ends with a dossier. An unusable plan (all documents
excluded, empty questions, a blocked prompt) is re-asked once, then replaced by a plan built in
code, an error alert heading the summary; upper-case ids are repaired with an alert; a writer cut by
MAX_TOKENS on every attempt leaves a dossier rendered by code from the findings, marked in the
summary and run.json."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import AXES, DOCS, write_corpus
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow
from veille.run.summary import format_summary
from veille.textstats import MODEL_SECTIONS, split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

ALL_IDS = [d[0] for d in DOCS]


def _plan(questions: list[str] | None = None, upper: bool = False) -> dict[str, Any]:
    sub_tasks = []
    for i, (question, ids) in enumerate(AXES, 1):
        q = question if questions is None else questions[i - 1]
        sub_tasks.append(
            {"id": f"st-{i}", "question": q, "doc_ids": [d.upper() for d in ids] if upper else ids}
        )
    return {"sub_tasks": sub_tasks, "excluded": []}


def _json(obj: Any) -> Callable[[], Reply]:
    return lambda: Reply.json(obj, prompt_tokens=500, output_tokens=50)


PLANNERS: dict[str, Callable[[], Reply]] = {
    "all_excluded": _json({"sub_tasks": [], "excluded": ALL_IDS}),
    "empty_questions": _json(_plan(questions=["", "  ", "\n"])),
    "blocked": lambda: Reply.blocked("PROHIBITED_CONTENT"),
}


def _env(monkeypatch: pytest.MonkeyPatch, server: FakeGemini, warehouse: Path) -> None:
    use_fake_gemini(monkeypatch, server, warehouse, key="AIza-test-key")


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        yield fake


def _override(server: FakeGemini, role: str, reply: Callable[[], Reply]) -> None:
    others = gemini_responder()

    def respond(body: dict[str, Any], model: str) -> Reply:
        return reply() if role_of(body) == role else others(body, model)

    server.responder = respond


def _run(server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _env(monkeypatch, server, tmp_path / "warehouse")
    corpus = write_corpus(tmp_path / "corpus")
    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert all(split_sections(report).get(name) for name in (*MODEL_SECTIONS, "Sources"))
    return run_dir


def _alerts(run_dir: Path) -> list[dict[str, Any]]:
    return list(json.loads((run_dir / "alerts.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("case", sorted(PLANNERS))
def test_an_unusable_plan_is_reasked_once_then_built_by_code(
    case: str, server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _override(server, "planner", PLANNERS[case])
    run_dir = _run(server, tmp_path, monkeypatch)

    planner_requests = [r for r in server.requests if role_of(r.body) == "planner"]
    assert len(planner_requests) == 2  # the proposal, then one re-ask with the validator's findings
    second = "".join(p.get("text", "") for p in planner_requests[1].body["contents"][0]["parts"])
    assert "Contrôle de ta proposition précédente" in second
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    used = {i for st in plan["sub_tasks"] for i in st["doc_ids"]}
    assert plan["sub_tasks"] and all(st["question"].strip() for st in plan["sub_tasks"])
    assert {"doc-01", "doc-03", "doc-05"} <= used  # each names a compared product
    code_plan = [a for a in _alerts(run_dir) if a["code"] == "plan.code_plan"]
    assert len(code_plan) == 1 and code_plan[0]["severity"] == "error"
    summary = format_summary(run_dir).splitlines()
    assert summary[1].startswith("ATTENTION [plan.code_plan]")  # heads the summary
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "completed" and "plan" in run["rendered_by_code"]


def test_upper_case_ids_are_repaired_with_an_alert(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _override(server, "planner", _json(_plan(upper=True)))
    run_dir = _run(server, tmp_path, monkeypatch)

    assert [role_of(r.body) for r in server.requests].count("planner") == 1  # repaired, not re-asked
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    assert [st["doc_ids"][:2] for st in plan["sub_tasks"]][:3] == [ids for _, ids in AXES]
    repaired = [a for a in _alerts(run_dir) if a["code"] == "plan.repaired_ids"]
    assert len(repaired) == 1 and "DOC-01" in repaired[0]["message"]
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert run["rendered_by_code"] == []


def test_a_writer_cut_on_every_attempt_leaves_a_dossier_rendered_by_code(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _override(server, "writer", lambda: Reply.max_tokens('{"synthesis": [{"text": "Kestrel mè'))
    run_dir = _run(server, tmp_path, monkeypatch)

    assert [role_of(r.body) for r in server.requests].count("writer") >= 2  # re-asked, then given up
    review = json.loads((run_dir / "review.json").read_text(encoding="utf-8"))
    key_points = split_sections(review["rounds"][0]["draft"])["Points clés"]  # before any revision
    for doc in ("doc-01", "doc-03", "doc-05"):  # every analyst finding is in the dossier, cited
        assert f"Constat tiré de {doc}" in key_points
    assert "[1]" in key_points
    rendered = [a for a in _alerts(run_dir) if a["code"] == "write.rendered_by_code"]
    assert len(rendered) == 1 and rendered[0]["severity"] == "error"
    assert "ATTENTION [write.rendered_by_code]" in format_summary(run_dir)
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "completed" and run["rendered_by_code"] == ["writer"]
