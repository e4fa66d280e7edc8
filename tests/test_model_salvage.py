"""Answers kept item by item (issue 38 item 3, veille.models.salvage): a lenient reading (JSON in a
fence or after prose, trailing prose ignored), invalid items dropped one by one with their kind,
the answer kept when what remains is usable, a re-ask only when nothing is, quoting the errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from veille.backends import build_client
from veille.dossier import dossier_schema
from veille.itempolicy import ItemPolicy
from veille.journal import read_journal
from veille.models.salvage import Kept, Unusable, find_json, keep_items
from veille.models.scripted import ScriptedModel
from veille.roles.analyst import ANALYST, AnalystInput, DocumentText, findings_schema
from veille.roles.limits import DOSSIER_ITEMS, FIGURE_CHARS, FINDINGS_ITEMS, REASON_CHARS, TEXT_CHARS
from veille.settings import Settings
from veille.steps.answer_items import ITEMS_DROPPED, dropped_items_alerts

IDS = ("doc-01", "doc-02", "doc-03")
SCHEMA = findings_schema(IDS)


def finding(statement: str, *ids: str, figures: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"statement": statement, "doc_ids": list(ids or IDS[:1]), "figures": list(figures)}


def note(*ids: str, retained: str = "doc-01") -> dict[str, Any]:
    return {"doc_ids": list(ids), "retained": retained, "reason": "Correctif plus récent."}


def answer(findings: list[Any], contradictions: list[Any] = (), questions: list[Any] = ()) -> str:  # type: ignore[assignment]
    body = {"findings": findings, "contradictions": list(contradictions), "open_questions": list(questions)}
    return json.dumps(body, ensure_ascii=False)


def kept(result: Kept[Any] | Unusable) -> Kept[Any]:
    assert isinstance(result, Kept), getattr(result, "error", result)
    return result


# --- reading leniently ------------------------------------------------------------------------------


def test_json_in_a_fence_after_a_sentence_is_read_and_the_trailing_prose_ignored() -> None:
    body = answer([finding("Le débit atteint 1 180 tokens/s.")])
    text = f"Voici ma réponse au format demandé :\n```json\n{body}\n```\nJ'espère que cela aide {{ok}}."
    result = kept(keep_items(SCHEMA, text, FINDINGS_ITEMS))
    assert [f.statement for f in result.output.findings] == ["Le débit atteint 1 180 tokens/s."]
    assert result.unwrapped and result.dropped == ()


def test_json_after_prose_without_a_fence_is_read() -> None:
    body = answer([finding("Constat.")])
    result = kept(keep_items(SCHEMA, f"Réponse : {body} Fin de la réponse.", None))
    assert result.output.findings[0].statement == "Constat." and result.unwrapped


def test_a_truncated_answer_is_never_replaced_by_one_of_its_inner_items() -> None:
    # The first finding is a whole JSON object inside the cut answer: it holds none of the schema's
    # top-level fields, so it is not taken for the answer.
    text = answer([finding("Premier."), finding("Second.")])[:-30]
    assert find_json(text, SCHEMA.model_fields) is None
    assert isinstance(keep_items(SCHEMA, text, FINDINGS_ITEMS), Unusable)


# --- items dropped one by one -------------------------------------------------------------------------


def test_a_one_document_contradiction_and_an_overlong_figure_are_dropped_the_rest_kept() -> None:
    long_figure = "9" * (FIGURE_CHARS + 1)
    text = answer(
        [finding("Kestrel mène.", figures=("1 180 tokens/s", long_figure)), finding("Zorblax suit.")],
        [note("doc-01"), note("doc-01", "doc-02")],
    )
    result = kept(keep_items(SCHEMA, text, FINDINGS_ITEMS))
    # The figure goes, not its finding; the one-document note goes, not the other one.
    assert [f.figures for f in result.output.findings] == [["1 180 tokens/s"], []]
    assert [c.doc_ids for c in result.output.contradictions] == [["doc-01", "doc-02"]]
    assert dict(result.dropped) == {"contradictions:too_short": 1, "findings.figures:string_too_long": 1}


def test_duplicates_and_items_past_a_list_ceiling_are_dropped_the_first_kept() -> None:
    questions = [f"Question {n} ?" for n in range(40)]  # the schema allows 30 (veille.roles.limits)
    text = answer([finding("Un."), finding("Un."), finding("Deux.")], questions=questions)
    result = kept(keep_items(SCHEMA, text, FINDINGS_ITEMS))
    assert [f.statement for f in result.output.findings] == ["Un.", "Deux."]
    assert result.output.open_questions == questions[:30]
    assert dict(result.dropped) == {"findings:duplicate": 1, "open_questions:surplus": 10}


def test_every_finding_invalid_is_unusable_but_an_explicit_empty_list_is_an_answer() -> None:
    dead = answer([finding("x" * (TEXT_CHARS + 1)), {"doc_ids": ["doc-01"]}])
    unusable = keep_items(SCHEMA, dead, FINDINGS_ITEMS)
    assert isinstance(unusable, Unusable) and "findings" in unusable.note
    assert kept(keep_items(SCHEMA, answer([]), FINDINGS_ITEMS)).output.findings == []


def test_an_error_outside_the_declared_lists_makes_the_answer_unusable() -> None:
    # No policy: the answer validates whole, as before issue 38.
    text = answer([finding("Bon."), finding("x" * (TEXT_CHARS + 1))])
    assert isinstance(keep_items(SCHEMA, text, None), Unusable)
    # A missing top-level field is nobody's item.
    assert isinstance(keep_items(SCHEMA, json.dumps({"contradictions": []}), FINDINGS_ITEMS), Unusable)


def test_a_dossier_keeps_its_valid_sections_and_points_and_needs_its_synthesis() -> None:
    schema = dossier_schema([1, 2], ["st-1", "st-2"])
    cited = {"text": "Synthèse.", "citations": [1]}
    point = {"text": "Point.", "citations": [1], "superseded": False}
    bad_point = {"text": "Point.", "citations": [9], "superseded": False}  # no source 9
    dossier = {
        "synthesis": [cited, {**cited, "text": "Deux."}, {**cited, "text": "Trois."}],
        "sections": [
            {"axis": "st-1", "points": [point, bad_point]},
            {"axis": "st-9", "points": [point]},  # an axis the request does not have
        ],
        "contradictions": [],
        "uncertainties": [],
        "recommendation": [cited],
    }
    result = kept(keep_items(schema, json.dumps(dossier), DOSSIER_ITEMS))
    sections = result.output.model_dump()["sections"]
    assert [(s["axis"], len(s["points"])) for s in sections] == [("st-1", 1)]
    assert dict(result.dropped) == {"sections.points:literal_error": 1, "sections:literal_error": 1}
    # The recommendation the schema requires is not an item to drop.
    no_reco = {**dossier, "recommendation": [{"text": "R.", "citations": [9]}]}
    assert isinstance(keep_items(schema, json.dumps(no_reco), DOSSIER_ITEMS), Unusable)


# --- the property ---------------------------------------------------------------------------------------

_WORDS = st.text(alphabet="abcdefghij éè'", min_size=1, max_size=40).map(str.strip).filter(bool)
_FIGURES = st.lists(_WORDS, max_size=3, unique=True)
_VALID_FINDING = st.builds(
    lambda s, ids, figs: finding(s, *ids, figures=tuple(figs)),
    _WORDS,
    st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True),
    _FIGURES,
)
_INVALID_FINDING = st.sampled_from(
    [
        finding("x" * (TEXT_CHARS + 1)),  # over-long statement
        {"statement": "Sans source.", "doc_ids": [], "figures": []},  # no document
        {"doc_ids": ["doc-01"], "figures": []},  # no statement
        {"statement": 42, "doc_ids": ["doc-01"], "figures": []},  # not a string
        "pas un objet",
    ]
)
_VALID_NOTE = st.builds(
    lambda ids: note(*ids, retained=ids[0]),
    st.lists(st.sampled_from(IDS), min_size=2, max_size=3, unique=True),
)
_INVALID_NOTE = st.sampled_from(
    [note("doc-02"), {**note("doc-01", "doc-02"), "reason": "r" * (REASON_CHARS + 1)}]
)
_VALID_QUESTION = _WORDS
_INVALID_QUESTION = st.sampled_from(["q" * (REASON_CHARS + 1), 7])
_PROSE = st.text(alphabet="abcdefghij ,.:!?éà\n", max_size=60)


@st.composite
def mixed(draw: st.DrawFn, valid: Any, invalid: Any, *, min_valid: int = 0) -> tuple[list[Any], list[Any]]:
    """(valid items, the answer's list: them with invalid ones injected anywhere)."""
    good = draw(
        st.lists(valid, min_size=min_valid, max_size=6, unique_by=lambda i: json.dumps(i, sort_keys=True))
    )
    mixed_list = list(good)
    for item in draw(st.lists(invalid, max_size=4)):
        mixed_list.insert(draw(st.integers(0, len(mixed_list))), item)
    return good, mixed_list


@st.composite
def wrapped(draw: st.DrawFn, body: str) -> str:
    how = draw(st.sampled_from(["bare", "fence", "prose", "both"]))
    before, after = draw(_PROSE), draw(_PROSE)
    if how == "bare":
        return body
    if how == "fence":
        return f"{before}\n```json\n{body}\n```\n{after}"
    if how == "prose":
        return f"{before} {body}"
    return f"{before} {body} {after}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_kept_items_are_exactly_the_valid_ones(data: st.DataObject) -> None:
    findings, sent_findings = data.draw(mixed(_VALID_FINDING, _INVALID_FINDING, min_valid=1))
    notes, sent_notes = data.draw(mixed(_VALID_NOTE, _INVALID_NOTE))
    questions, sent_questions = data.draw(mixed(_VALID_QUESTION, _INVALID_QUESTION))
    # An over-long figure injected into a valid finding: the figure goes, the finding stays.
    spoiled_figures = data.draw(st.booleans())
    if spoiled_figures:
        target = data.draw(st.integers(0, len(findings) - 1))
        spoiled = json.loads(json.dumps(findings[target]))
        spoiled["figures"].insert(0, "9" * (FIGURE_CHARS + 1))
        sent_findings[sent_findings.index(findings[target])] = spoiled
    text = data.draw(wrapped(answer(sent_findings, sent_notes, sent_questions)))

    result = kept(keep_items(SCHEMA, text, FINDINGS_ITEMS))

    out = result.output.model_dump()
    assert out["findings"] == findings
    assert out["contradictions"] == notes
    assert out["open_questions"] == questions
    invalid = len(sent_findings) + len(sent_notes) + len(sent_questions)
    invalid -= len(findings) + len(notes) + len(questions)
    # Every injected item counted once, by its kind.
    assert sum(count for _kind, count in result.dropped) == invalid + int(spoiled_figures)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_an_answer_with_no_valid_finding_left_is_unusable(data: st.DataObject) -> None:
    sent = data.draw(st.lists(_INVALID_FINDING, max_size=4))
    text = data.draw(wrapped(answer(sent)))
    result = keep_items(SCHEMA, text, FINDINGS_ITEMS)
    assert isinstance(result, Unusable) == bool(sent)  # sent empty: the model's explicit answer


# --- through the client ----------------------------------------------------------------------------------


def _client(tmp_path: Path, model: ScriptedModel) -> Any:
    settings = Settings(warehouse_dir=tmp_path / "warehouse", backend="offline")
    return build_client(settings, run_id="run-1", journal_path=tmp_path / "calls.jsonl", model=model)


def _analyst_input() -> AnalystInput:
    docs = [DocumentText(id=i, date="2026-01-01", source_type="note", title=i, body="Texte.") for i in IDS]
    return AnalystInput(subtask_id="st-1", question="Quel débit ?", documents=docs)


def test_a_mediocre_answer_is_kept_in_one_request_with_one_alert(tmp_path: Path) -> None:
    mediocre = (
        "Voici :\n```json\n"
        + answer([finding("Kestrel mène.", figures=("9" * (FIGURE_CHARS + 1),))], [note("doc-01")])
        + "\n```"
    )
    model = ScriptedModel({"analyst": [mediocre]})
    with _client(tmp_path, model) as client:
        result = client.ask(ANALYST, _analyst_input(), subtask_id="st-1")
    assert result.attempts == 1 and len(model.requests) == 1
    assert [f.statement for f in result.output.findings] == ["Kestrel mène."]
    assert [r.status for r in read_journal(tmp_path / "calls.jsonl")] == ["ok"]
    (alert,) = dropped_items_alerts("analyse", result, "analyste de st-1", "st-1")
    assert alert.code == ITEMS_DROPPED and "2 élément(s)" in alert.message
    assert "contradictions" in alert.message and "findings.figures" in alert.message


def test_nothing_usable_is_re_asked_with_the_errors_never_the_answer(tmp_path: Path) -> None:
    dead = answer([finding("x" * (TEXT_CHARS + 1))])
    model = ScriptedModel({"analyst": [dead, answer([finding("Bon.")])]})
    with _client(tmp_path, model) as client:
        result = client.ask(ANALYST, _analyst_input(), subtask_id="st-1")
    assert result.attempts == 2 and result.dropped == ()
    ((echoed, errors),) = model.requests[1].feedback
    assert echoed == "" and "x" * 100 not in errors and "findings" in errors
    assert len(errors) <= 2000


class _Plain(BaseModel):
    value: int


def test_a_policy_never_makes_a_whole_answer_error_droppable() -> None:
    assert isinstance(keep_items(_Plain, '{"value": "x"}', ItemPolicy(droppable=("value",))), Unusable)


def test_a_repeat_is_never_dropped_below_a_list_minimum() -> None:
    # The writer's synthesis needs three items: two identical ones stay rather than leave two.
    schema = dossier_schema([1], ["st-1"])
    cited = {"text": "Même phrase.", "citations": [1]}
    dossier = {
        "synthesis": [cited, cited, {**cited, "text": "Autre."}],
        "sections": [],
        "contradictions": [],
        "uncertainties": [cited, cited],
        "recommendation": [cited],
    }
    result = kept(keep_items(schema, json.dumps(dossier), DOSSIER_ITEMS))
    assert len(result.output.model_dump()["synthesis"]) == 3 and result.dropped == ()
