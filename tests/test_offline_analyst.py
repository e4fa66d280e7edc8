"""Offline analyst: findings with verbatim figures and given ids only, contradictions settled by the
authority ranking of veille/data/authority.toml, open questions, documents treated as data."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_offline_fixtures import (
    SYNTHETIC_CONTRADICTIONS,
    bundled_document_texts,
    bundled_facts,
    bundled_planner_input,
    synthetic_analyst_input,
    synthetic_documents,
)
from veille.offline.analyst import analyse
from veille.offline.authority import AuthorityRanking
from veille.offline.planner import plan
from veille.roles.analyst import AnalystInput, Findings

QUESTION = (
    "Dans le cadre du choix d'un outil de sauvegarde, que disent les documents sur les performances "
    "(débit de sauvegarde en Go/s, durée de restauration complète) pour Sauvia, Barzo et Quillon ?"
)


def _note_for(findings: Findings, docs: list[str]) -> str | None:
    for note in findings.contradictions:
        if set(docs) <= set(note.doc_ids):
            return note.retained
    return None


def test_findings_quote_figures_verbatim_and_cite_their_document(authority: AuthorityRanking) -> None:
    ids = ["bk-01", "bk-02"]
    result = analyse(synthetic_analyst_input(QUESTION, ids), authority)
    assert result.findings
    bodies = {d.id: d.body for d in synthetic_documents(ids)}
    for f in result.findings:
        assert f.doc_ids and set(f.doc_ids) <= set(ids)
        for figure in f.figures:
            assert figure in f.statement  # verbatim, unit included
            assert any(figure in bodies[i] for i in f.doc_ids)
    quoted = {fig for f in result.findings for fig in f.figures}
    # The measured throughputs, with their unit, are what the question asks for.
    assert {"2,6 Go/s", "1,8 Go/s"} <= quoted


def test_superseded_claim_is_noted_not_listed(authority: AuthorityRanking) -> None:
    result = analyse(synthetic_analyst_input(QUESTION, ["bk-01", "bk-02"]), authority)
    assert _note_for(result, ["bk-01", "bk-02"]) == "bk-02"
    note = result.contradictions[0]
    assert "2,1 Go/s" in note.reason and "4,0 Go/s" in note.reason
    assert "bk-" not in note.reason  # no ids in a reason the report may quote
    # The vendor's figure is in the note, not repeated as a finding.
    assert not any("4,0 Go/s" in f.figures for f in result.findings)


@pytest.mark.parametrize(("docs", "retained"), SYNTHETIC_CONTRADICTIONS)
def test_each_synthetic_contradiction_is_settled(
    authority: AuthorityRanking, docs: list[str], retained: str
) -> None:
    question = (
        "Dans le cadre du choix d'un outil de sauvegarde entre Sauvia, Barzo et Quillon, que disent les "
        "documents sur le débit, le prix des licences, les failles et correctifs, et l'avenir de l'éditeur ?"
    )
    result = analyse(synthetic_analyst_input(question, docs), authority)
    assert _note_for(result, docs) == retained, result.contradictions


def test_ranking_order_comes_from_the_config(authority: AuthorityRanking) -> None:
    # Same pair, ranking reversed in config: the vendor sheet now outranks the benchmark.
    reversed_types = dict(authority.types)
    reversed_types["fiche-fournisseur"] = authority.types["fiche-fournisseur"].model_copy(
        update={"rank": 200}
    )
    flipped = authority.model_copy(update={"types": reversed_types})
    result = analyse(synthetic_analyst_input(QUESTION, ["bk-01", "bk-02"]), flipped)
    assert _note_for(result, ["bk-01", "bk-02"]) == "bk-01"
    # Recency first instead of authority: the later benchmark wins again.
    recency = flipped.model_copy(update={"order": ("date", "authority")})
    result = analyse(synthetic_analyst_input(QUESTION, ["bk-01", "bk-02"]), recency)
    assert _note_for(result, ["bk-01", "bk-02"]) == "bk-02"


def test_instructions_inside_documents_are_ignored(authority: AuthorityRanking) -> None:
    question = "Que disent les documents sur le chiffrement et l'immutabilité des sauvegardes de Quillon ?"
    result = analyse(synthetic_analyst_input(question, ["bk-09"]), authority)
    cited = {i for f in result.findings for i in f.doc_ids}
    assert cited == {"bk-09"}
    text = " ".join(f.statement for f in result.findings) + " ".join(result.open_questions)
    assert "zz-99" not in text and "Ignorez" not in text
    assert any("30 jours" in f.figures for f in result.findings)


def test_forged_ids_in_a_document_never_become_citations(authority: AuthorityRanking) -> None:
    doc = synthetic_documents(["bk-02"])[0]
    forged = doc.model_copy(
        update={
            "body": doc.body + "\nSelon doc-99 et bk-77, le débit de Sauvia atteint 9,9 Go/s par serveur.\n"
        }
    )
    result = analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=[forged]), authority)
    assert {i for f in result.findings for i in f.doc_ids} == {"bk-02"}
    assert all(set(n.doc_ids) <= {"bk-02"} for n in result.contradictions)


def test_open_questions_name_what_is_missing(authority: AuthorityRanking) -> None:
    question = (
        "Que disent les documents sur l'exploitation (supervision, mises à jour, consommation électrique "
        "des serveurs) pour Barzo ?"
    )
    result = analyse(synthetic_analyst_input(question, ["bk-10"]), authority)
    assert any("consommation électrique" in q for q in result.open_questions), result.open_questions
    assert not any("supervision" in q for q in result.open_questions)


def test_hedged_claims_become_open_questions_unless_settled(authority: AuthorityRanking) -> None:
    question = "Que disent les documents sur l'avenir de Barzo (risque d'abandon, feuille de route) ?"
    alone = analyse(synthetic_analyst_input(question, ["bk-11"]), authority)
    assert any(q.startswith("À confirmer") for q in alone.open_questions)
    settled = analyse(synthetic_analyst_input(question, ["bk-11", "bk-12"]), authority)
    assert not any(q.startswith("À confirmer") for q in settled.open_questions)
    assert not any("serait abandonné" in f.statement for f in settled.findings)


def test_bundled_corpus_contradictions_retain_the_later_source(
    bundled_corpus: Path, authority: AuthorityRanking
) -> None:
    """Each contradiction of reference/facts.yaml is noticed by the analyst of the sub-task holding it,
    and settled in favour of the latest document of the group (in this corpus the latest one is
    also the most authoritative: measured, official, the fix)."""
    facts = bundled_facts(bundled_corpus)
    documents = bundled_document_texts(bundled_corpus)
    result = plan(bundled_planner_input(bundled_corpus), authority.framing())
    notes = []
    for st in result.sub_tasks:
        data = AnalystInput(
            subtask_id=st.id, question=st.question, documents=[documents[i] for i in st.doc_ids]
        )
        notes += analyse(data, authority).contradictions
    for contradiction in facts["contradictions"]:
        docs = contradiction["docs"]
        latest = max(docs, key=lambda i: documents[i].date)
        matching = [n for n in notes if set(docs) <= set(n.doc_ids)]
        assert matching, (contradiction["id"], [n.doc_ids for n in notes])
        assert all(n.retained == latest for n in matching), (contradiction["id"], matching)
