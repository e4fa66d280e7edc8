"""Every role's output schema carries the constraints its validator enforces (issue 12, item 2).

- the wire schema (``response_json_schema``) drops nothing pydantic's schema constrains;
- it goes through the real google-genai SDK to the fake server as built, with its enums, item
  counts, integer bounds and required fields, and the offline engine's answer (valid against
  the wire schema, which is stricter than pydantic) comes back validated;
- schema-valid ⇒ validator-valid: any instance of the wire schema (tests/schema_strategy.py, 200
  per distinct schema class, each also checked with jsonschema) validates with the role's pydantic schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel

from testkit.fake_gemini import FakeGemini, Reply
from tests.role_inputs import ROLE_INPUTS, all_roles, role_cases
from tests.schema_strategy import from_wire_schema
from veille.backends import build_client, offline_backend
from veille.models.base import ModelRequest
from veille.models.function import FunctionModel
from veille.models.wire import unsupported_keywords, wire_schema
from veille.roles.analyst import AnalystInput
from veille.roles.analyst_update import AnalystUpdateInput
from veille.roles.base import Role
from veille.roles.critic import CriticInput
from veille.roles.judge import JUDGE_CRITERIA, JudgeInput
from veille.roles.limits import ITEMS, REASON_CHARS, TEXT_CHARS
from veille.roles.planner import SubTask
from veille.settings import Settings
from veille.steps.analyse import restrict_citations
from veille.steps.analyse_update import merge_update
from veille.steps.update_context import statement_key

CASES = role_cases()
IDS = [case_id for case_id, _, _ in CASES]
# Keywords that restrict which instances are valid (annotations such as description are not).
CONSTRAINTS = (
    "type", "enum", "minItems", "maxItems", "maxLength", "minimum", "maximum", "additionalProperties"
)  # fmt: skip


def _schema(role: Role[BaseModel, BaseModel], data: BaseModel) -> type[BaseModel]:
    return role.schema_for(data)


def _constraints(node: Any, defs: dict[str, Any], path: str = "") -> set[tuple[str, str, str]]:
    """(path, keyword, value) for every constraint of a JSON schema, ``$ref`` resolved here
    (independently of veille.models.wire), ``const`` read as a one-value ``enum``."""
    if not isinstance(node, dict):
        return set()
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        return _constraints({**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs, path)
    out: set[tuple[str, str, str]] = set()
    for key, value in node.items():
        if key == "const":
            out.add((path, "enum", json.dumps([value])))
        elif key in CONSTRAINTS and not isinstance(value, dict):
            out.add((path, key, json.dumps(value, sort_keys=True)))
        elif key == "required":
            out |= {(path, "required", name) for name in value}
    for name, sub in (node.get("properties") or {}).items():
        out |= _constraints(sub, defs, f"{path}/{name}")
    for key in ("items", "additionalProperties"):
        out |= _constraints(node.get(key), defs, f"{path}/{key}")
    for key in ("anyOf", "oneOf", "prefixItems"):
        for i, sub in enumerate(node.get(key) or []):
            out |= _constraints(sub, defs, f"{path}/{key}/{i}")
    return out


def test_every_role_has_realistic_inputs() -> None:
    labels = list(all_roles())
    assert set(labels) == {
        "planner", "analyst", "analyst_update", "writer", "critic", "reviser", "judge", "researcher"
    }  # fmt: skip
    assert set(ROLE_INPUTS) == set(labels)
    for _, role, data in CASES:
        assert isinstance(data, role.input_type)


@pytest.mark.parametrize(("case_id", "role", "data"), CASES, ids=IDS)
def test_wire_schema_keeps_every_constraint(case_id: str, role: Any, data: BaseModel) -> None:
    schema = _schema(role, data)
    assert unsupported_keywords(schema) == []
    source = schema.model_json_schema()
    wire = wire_schema(schema)
    jsonschema.Draft202012Validator.check_schema(wire)
    assert _constraints(source, source.get("$defs", {})) <= _constraints(wire, {})
    assert "$ref" not in json.dumps(wire) and "$defs" not in wire


# --- through the real SDK to the fake server -------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        yield fake


@pytest.fixture(scope="module")
def engine() -> FunctionModel:
    return offline_backend(Settings())


def _offline_answer(engine: FunctionModel, role: Any, data: BaseModel, schema: type[BaseModel]) -> str:
    request = ModelRequest(
        role=role.name, model="offline", system="", prompt="", output_schema=schema, input=data
    )
    return engine.respond(request).text


@pytest.mark.parametrize(("case_id", "role", "data"), CASES, ids=IDS)
def test_schema_goes_through_the_sdk_with_its_constraints(
    case_id: str,
    role: Any,
    data: BaseModel,
    server: FakeGemini,
    engine: FunctionModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-real")
    schema = _schema(role, data)
    wire = wire_schema(schema)
    answer = _offline_answer(engine, role, data, schema)
    # The offline engine answers in the wire shape (every field present), not only pydantic's.
    jsonschema.validate(json.loads(answer), wire)
    server.reset()
    server.script(Reply.text(answer))
    config = Settings(
        backend="gemini",
        gemini_base_url=server.base_url,
        gemini_api_version="v1beta",
        warehouse_dir=tmp_path / "warehouse",
        http_attempts=1,
        use_cache=False,
        reask_attempts=0,
    )
    with build_client(config, run_id="run-schemas", journal_path=tmp_path / "calls.jsonl") as client:
        result = client.ask(role, data)
    assert result.attempts == 1
    [request] = server.requests
    generation = request.body["generationConfig"]
    assert "responseSchema" not in generation
    sent = generation["responseJsonSchema"]
    assert sent == wire  # the SDK sent our JSON schema untouched
    source = schema.model_json_schema()
    assert _constraints(source, source.get("$defs", {})) <= _constraints(sent, {})
    _role_specific(case_id.rsplit("-", 1)[0], data, sent)
    if role.name != "researcher":  # free text + grounding metadata: code writes its JSON
        assert _unbounded(sent) == []  # every string and list the model writes, bounded on the wire


def _unbounded(node: Any, path: str = "") -> list[str]:
    """Paths of the strings without ``maxLength`` (enums aside) and arrays without ``maxItems``."""
    if not isinstance(node, dict):
        return []
    out = []
    if node.get("type") == "string" and "enum" not in node and "maxLength" not in node:
        out.append(f"{path or '/'}: string")
    if node.get("type") == "array" and "maxItems" not in node:
        out.append(f"{path or '/'}: array")
    for name, sub in (node.get("properties") or {}).items():
        out += _unbounded(sub, f"{path}/{name}")
    for key in ("items", "additionalProperties"):
        out += _unbounded(node.get(key), f"{path}/{key}")
    for key in ("anyOf", "oneOf", "prefixItems"):
        for i, sub in enumerate(node.get(key) or []):
            out += _unbounded(sub, f"{path}/{key}/{i}")
    return out


def _role_specific(name: str, data: BaseModel, sent: dict[str, Any]) -> None:
    if name == "judge":
        assert isinstance(data, JudgeInput)
        keys = [f"r{i}" for i in range(len(data.responses))]
        assert list(sent["properties"]) == keys and sent["required"] == keys
        for key in keys:
            score = sent["properties"][key]
            assert set(score["required"]) == {*JUDGE_CRITERIA, "justification"}
            for criterion in JUDGE_CRITERIA:
                assert score["properties"][criterion] | {"description": ""} == {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 5,
                    "description": "",
                }
    elif name == "critic":
        assert isinstance(data, CriticInput)
        assert set(sent["required"]) == {*data.criteria, "remarks"}
        for criterion in data.criteria:
            prop = sent["properties"][criterion]
            assert (prop["type"], prop["minimum"], prop["maximum"]) == ("integer", 1, 5)
        assert sent["properties"]["remarks"]["items"] == {"type": "string", "maxLength": REASON_CHARS}
        assert sent["properties"]["remarks"]["maxItems"] == ITEMS
    elif name == "analyst":
        assert isinstance(data, AnalystInput)
        ids = [d.id for d in data.documents]
        finding = sent["properties"]["findings"]
        note = sent["properties"]["contradictions"]
        if ids:
            assert finding["maxItems"] == data.max_findings  # code's bound, in the schema the model sees
            assert finding["items"]["properties"]["statement"]["maxLength"] == TEXT_CHARS
            assert finding["items"]["properties"]["doc_ids"]["items"]["enum"] == ids
            assert finding["items"]["properties"]["doc_ids"]["minItems"] == 1
            assert note["items"]["properties"]["retained"]["enum"] == ids
            assert note["items"]["properties"]["doc_ids"]["items"]["enum"] == ids
            assert note["items"]["properties"]["doc_ids"]["minItems"] == 2
        else:
            assert finding["maxItems"] == 0
        if len(ids) < 2:
            assert note["maxItems"] == 0
    elif name == "analyst_update":
        assert isinstance(data, AnalystUpdateInput)
        new = [d.id for d in data.documents]
        every = new + [d.id for d in data.known_documents]
        finding = sent["properties"]["findings"]["items"]["properties"]["doc_ids"]
        assert (finding["items"]["enum"], finding["minItems"]) == (new, 1)  # new findings: new documents only
        notes = sent["properties"]["contradictions"]
        if len(every) < 2:
            assert notes["maxItems"] == 0
        else:  # at least one new document per contradiction, in the schema itself
            note = notes["items"]["properties"]
            assert note["new_doc_id"]["enum"] == new
            assert (note["other_doc_ids"]["items"]["enum"], note["other_doc_ids"]["minItems"]) == (every, 1)
            assert note["retained"]["enum"] == every
            assert set(notes["items"]["required"]) == {"new_doc_id", "other_doc_ids", "retained", "reason"}


# --- schema-valid ⇒ validator-valid ----------------------------------------------------------------


def _one_per_property(cases: list[tuple[str, Any, BaseModel]]) -> list[tuple[str, Any, BaseModel]]:
    """The cases of the property below, each checked once: two cases check the same thing when their
    role answers with the very same schema class (a cached class: the writer and the reviser share
    ``Dossier``) and the checks read neither input (only the analyst's, the update's and the judge's
    are read). Their ids are joined (``reviser-0+writer-0``). A class built per call (the planner's)
    is never shared, and a role that gets a schema of its own is checked on its own again."""
    reads_input = (AnalystInput, AnalystUpdateInput, JudgeInput)
    groups: dict[tuple[int, int], list[tuple[str, Any, BaseModel]]] = {}
    for case_id, role, data in cases:
        key = (id(_schema(role, data)), id(data) if isinstance(data, reads_input) else 0)
        groups.setdefault(key, []).append((case_id, role, data))
    return [("+".join(c[0] for c in group), group[0][1], group[0][2]) for group in groups.values()]


PROPERTY_CASES = _one_per_property(CASES)


@pytest.mark.parametrize(("case_id", "role", "data"), PROPERTY_CASES, ids=[c[0] for c in PROPERTY_CASES])
def test_any_schema_valid_answer_validates(case_id: str, role: Any, data: BaseModel) -> None:
    schema = _schema(role, data)
    wire = wire_schema(schema)
    validator = jsonschema.Draft202012Validator(wire)
    checked: list[int] = []

    @settings(
        max_examples=200,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(instance=from_wire_schema(wire))
    def check(instance: Any) -> None:
        validator.validate(instance)  # the strategy itself is checked
        output = schema.model_validate(instance)  # never raises: that is the guarantee
        if isinstance(data, AnalystInput):
            _, alerts = restrict_citations(output, [d.id for d in data.documents], data.subtask_id)  # type: ignore[arg-type]
            assert "analyse.foreign_citation" not in {a.code for a in alerts}
        if isinstance(data, AnalystUpdateInput):
            # A schema-valid update merges with no foreign citation and no contradiction without a
            # new document (a note citing one document twice is still repaired, as for the analyst).
            known = [d.id for d in data.known_documents]
            new = [d.id for d in data.documents]
            sub_task = SubTask(id=data.subtask_id, question=data.question, doc_ids=known + new)
            merged, alerts = merge_update(sub_task, data.previous, output, new)  # type: ignore[arg-type]
            assert "analyse.foreign_citation" not in {a.code for a in alerts}
            # Every previous finding, then each new one once (a repeated statement is kept once).
            stated = {statement_key(f.statement) for f in data.previous.findings}
            fresh = {statement_key(f.statement) for f in output.findings} - stated  # type: ignore[attr-defined]
            assert len(merged.findings) == len(data.previous.findings) + len(fresh)
        if isinstance(data, JudgeInput):
            assert len(output.by_response()) == len(data.responses)  # type: ignore[attr-defined]
        checked.append(1)

    check()
    assert len(checked) >= 200
