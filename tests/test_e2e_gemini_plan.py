"""Issue 11 through the real google-genai SDK against the fake Gemini server: a planner that follows
the schema but answers arbitrarily (2 of the 40 bundled documents, the flagged one among them, no
mention of the rest) loses no document naming a request term without an alert, and plan.json
records why every excluded document is out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.corpus.request import load_request
from veille.flows.veille import veille_flow
from veille.roles.planner import EXCLUSION_REASONS, CatalogueEntry
from veille.settings import PROJECT_ROOT, Settings
from veille.steps.coverage import Vocabulary
from veille.store.readers import read_catalogue

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

BUNDLED = PROJECT_ROOT / "corpus"
# Schema-valid, arbitrary: the flagged off-topic doc-38 and one benchmark; doc-05 (a strong link)
# and doc-35 (a homonym) explicitly excluded; the 36 others never mentioned.
ARBITRARY = {
    "sub_tasks": [
        {
            "id": "st-1",
            "question": "Que disent ces documents ?",
            "doc_ids": ["doc-38", "doc-03"],
            "search_terms": [],
        }
    ],
    "excluded": ["doc-05", "doc-35"],
    # The planner's reading of the request (every wire property is required): proposes nothing.
    "axes": [],
    "options": [],
    "period_start": "",
    "period_end": "",
}


def _text(content: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in content.get("parts", []))


@contextmanager
def _planner_answers(plan: dict[str, Any]) -> Iterator[FakeGemini]:
    """A fake Gemini whose planner always answers ``plan``; the other roles as gemini_responder."""
    answer_others = gemini_responder()

    def respond(body: dict[str, Any], model: str) -> Reply:
        if role_of(body) == "planner":
            return Reply.json(plan, prompt_tokens=2000, output_tokens=80, model_version=model)
        return answer_others(body, model)

    with FakeGemini() as fake:
        fake.responder = respond
        yield fake


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with _planner_answers(ARBITRARY) as fake:
        yield fake


_KEYS = {
    "max_items": "maxItems",
    "min_items": "minItems",
    "min_length": "minLength",
    "max_length": "maxLength",
}


def _as_json_schema(node: Any) -> Any:
    """The SDK's ``responseSchema`` (OpenAPI subset: upper-case types, snake_case keys) as JSON schema."""
    if isinstance(node, list):
        return [_as_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("property_ordering", "propertyOrdering"):
            continue
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "properties":
            out[key] = {name: _as_json_schema(sub) for name, sub in value.items()}
        else:
            out[_KEYS.get(key, key)] = int(value) if key in _KEYS else _as_json_schema(value)
    return out


def _schema_sent(body: dict[str, Any]) -> dict[str, Any]:
    config = body["generationConfig"]
    if "responseJsonSchema" in config:  # JSON schema as is
        return dict(config["responseJsonSchema"])
    return dict(_as_json_schema(config["responseSchema"]))


def test_arbitrary_schema_valid_planner_loses_no_term_naming_document_silently(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse = tmp_path / "warehouse"
    use_fake_gemini(monkeypatch, server, warehouse, key="AIza-test-key")

    state = veille_flow(corpus=str(BUNDLED), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())

    planner_requests = [r for r in server.requests if role_of(r.body) == "planner"]
    assert len(planner_requests) == 2  # the proposal, then ONE re-ask with the validator's findings
    assert "Contrôle de ta proposition précédente" in _text(planner_requests[1].body["contents"][0])
    # The schema the model saw constrains ids and caps, and the arbitrary answer follows it.
    sent = _schema_sent(planner_requests[0].body)
    doc_ids = sent["properties"]["sub_tasks"]["items"]["properties"]["doc_ids"]
    assert len(doc_ids["items"]["enum"]) == 40 and doc_ids["maxItems"] >= 1
    jsonschema.validate(ARBITRARY, sent)

    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    settings = Settings.from_params(corpus=BUNDLED, warehouse=warehouse)
    catalogue: list[CatalogueEntry] = read_catalogue(settings.database, with_summaries=True).entries
    ids = [e.id for e in catalogue]
    used = {i for st in plan["sub_tasks"] for i in st["doc_ids"]}
    reasons = {e["id"]: e["reason"] for e in plan["exclusions"]}
    # Every document accounted for, every exclusion with a reason.
    assert used | set(plan["excluded"]) == set(ids) and not used & set(plan["excluded"])
    assert set(reasons) == set(plan["excluded"]) and set(reasons.values()) <= set(EXCLUSION_REASONS)
    assert reasons["doc-38"] == "injection"  # flagged and off topic: removed although planned
    assert "doc-05" in used and reasons.get("doc-35") == "planner_excluded"
    # No document naming a request term lost without an alert naming it.
    request = load_request(BUNDLED)
    vocabulary = Vocabulary.of(request.title, request.text, request.terms)
    named = {i for a in alerts for i in a.get("subjects", [])}
    for entry in catalogue:
        if entry.id in reasons and vocabulary.relevance(entry).names_term:
            assert entry.id in named, entry.id
    # Repeated conditions are one alert each.
    codes = [a["code"] for a in alerts]
    assert codes.count("plan.placed_by_code") == 1 and codes.count("plan.suspicious_exclusion") == 1
    placed = next(a for a in alerts if a["code"] == "plan.placed_by_code")
    assert len(placed["subjects"]) >= 25
    # max_docs bounds what a branch reads whole; a document it reads in part (its axis's sections, or
    # a same-measure partner's sections, veille.steps.plan_groups.co_read_pairs) is one another
    # branch reads: a few passages, not a document (veille.steps.plan_stable counts them the same way).
    for st in plan["sub_tasks"]:
        partial = st.get("passages", {})
        assert len([i for i in st["doc_ids"] if i not in partial]) <= settings.max_docs, st
        assert all(any(i in o["doc_ids"] for o in plan["sub_tasks"] if o is not st) for i in partial), st
    assert len(plan["sub_tasks"]) <= settings.max_subtasks
    assert (run_dir / "report.md").exists()


# A planner placing every document in three sub-tasks: the caps (8 per sub-task) cut the tails,
# here the bundled corpus's off-topic documents (doc-32 … doc-40) and doc-25 … doc-31.
_RELEVANT = [f"doc-{i:02d}" for i in range(1, 32)]
_OFF = [f"doc-{i:02d}" for i in range(32, 41)]
EVERYTHING = {
    "sub_tasks": [
        {"id": "st-1", "question": "Que disent ces documents ?", "doc_ids": _RELEVANT[0:8] + _OFF[0:3]},
        {"id": "st-2", "question": "Que disent ces documents ?", "doc_ids": _RELEVANT[8:16] + _OFF[3:6]},
        {"id": "st-3", "question": "Que disent ces documents ?", "doc_ids": _RELEVANT[16:] + _OFF[6:]},
    ],
    "excluded": [],
}


def test_a_planner_placing_everything_does_not_get_the_canteen_menu_read_after_the_caps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _planner_answers(EVERYTHING) as server:
        use_fake_gemini(monkeypatch, server, tmp_path / "warehouse", key="AIza-test-key")
        state = veille_flow(corpus=str(BUNDLED), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    used = {i for st in plan["sub_tasks"] for i in st["doc_ids"]}
    reasons = {e["id"]: e["reason"] for e in plan["exclusions"]}
    assert set(_RELEVANT) <= used  # every relevant document read
    # The menu (doc-34), the badges (doc-33), the cycling allowance (doc-39): the planner wanted
    # them, the caps cut them, their text names no engine and is not relevant: not put back.
    for doc_id in ("doc-33", "doc-34", "doc-39"):
        assert doc_id not in used and reasons[doc_id] == "cap", doc_id
    cited = {s["id"] for s in json.loads((run_dir / "sources.json").read_text(encoding="utf-8"))}
    assert cited and not cited & {"doc-33", "doc-34", "doc-39"}
