"""Precision of the offline contradictions, as properties (issue 28, item 2).

A contradiction is stated only between claims on the same subject (one option, one release), the
same quantity and the same unit, from two documents. Generated pairs of documents that differ in
any of these never give a ledger entry; two documents giving the same subject, quantity and unit
different values always give one, retaining the source the authority ranking puts first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.offline.analyst import analyse
from veille.offline.authority import AuthorityRanking
from veille.offline.compare import recommendation
from veille.offline.ledger import Statement, ledger
from veille.roles.analyst import AnalystInput, DocumentText
from veille.roles.writer import NumberedContradiction, SourceRef

OPTIONS = ["Alvera", "Bruneau", "Corvex"]
# Quantities with disjoint words, each with the units it is stated in.
QUANTITIES = {
    "latence de lecture": ["ms", "s"],
    "débit en écriture": ["Go/s", "Mo/s"],
    "prix de la licence": ["EUR", "USD"],
    "consommation électrique": ["kWh", "W"],
}
# Types with no ``supersedes`` rule between them: only figures can make a note.
TYPES = ["benchmark-interne", "fiche-fournisseur", "grille-tarifaire", "article-presse", "audit"]
QUESTION = "Que disent les documents sur la performance et le coût pour Alvera, Bruneau et Corvex ?"


@dataclass(frozen=True)
class Claim:
    option: str
    quantity: str
    unit: str
    value: int
    release: str = ""


def _document(n: int, claim: Claim, source_type: str, date: str) -> DocumentText:
    name = f"{claim.option} {claim.release}" if claim.release else claim.option
    body = (
        f"## Résultats\n\nPour {name}, la {claim.quantity} relevée est de {claim.value} {claim.unit}"
        " dans la configuration de référence.\n"
    )
    return DocumentText(
        id=f"doc-{n}", date=date, source_type=source_type, title=f"{name} : {claim.quantity}", body=body
    )


def _notes(authority: AuthorityRanking, a: DocumentText, b: DocumentText) -> list[NumberedContradiction]:
    return _numbered_notes(authority, [a, b])


def _numbered_notes(authority: AuthorityRanking, docs: list[DocumentText]) -> list[NumberedContradiction]:
    """The analyst's contradictions over ``docs``, sources numbered in order from 1."""
    found = analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=docs), authority)
    number = {d.id: n for n, d in enumerate(docs, start=1)}
    return [
        NumberedContradiction(
            subtask_id="st-1",
            retained=[number[note.retained]],
            rejected=[number[i] for i in note.doc_ids if i != note.retained],
            reason=note.reason,
        )
        for note in found.contradictions
    ]


def _entries(authority: AuthorityRanking, a: DocumentText, b: DocumentText) -> list:
    sources = [
        SourceRef(number=n, id=d.id, title=d.title, date=d.date, source_type=d.source_type)
        for n, d in ((1, a), (2, b))
    ]
    return ledger(_notes(authority, a, b), sources, [], OPTIONS, 40)


claims = st.builds(
    lambda option, quantity, pick, value: Claim(option, quantity, QUANTITIES[quantity][pick], value),
    st.sampled_from(OPTIONS),
    st.sampled_from(sorted(QUANTITIES)),
    st.integers(0, 1),
    st.integers(10, 900),
)
dates = st.sampled_from(["2026-02-10", "2026-05-20", "2026-09-30"])
types = st.sampled_from(TYPES)
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _differ(first: Claim, second: Claim, what: str) -> Claim:
    if what == "subject":
        other = next(o for o in OPTIONS if o != first.option)
        return Claim(other, first.quantity, first.unit, second.value)
    if what == "quantity":
        other = next(q for q in sorted(QUANTITIES) if q != first.quantity)
        return Claim(first.option, other, QUANTITIES[other][0], second.value)
    if what == "unit":
        other = next(u for u in QUANTITIES[first.quantity] if u != first.unit)
        return Claim(first.option, first.quantity, other, second.value)
    # Two releases of one product are two subjects.
    return Claim(first.option, first.quantity, first.unit, second.value, release="2.4")


@SETTINGS
@given(
    first=claims,
    second=claims,
    what=st.sampled_from(["subject", "quantity", "unit", "release"]),
    types_=st.tuples(types, types),
    dates_=st.tuples(dates, dates),
)
def test_claims_differing_in_subject_quantity_unit_or_release_never_make_an_entry(
    authority: AuthorityRanking,
    first: Claim,
    second: Claim,
    what: str,
    types_: tuple[str, str],
    dates_: tuple[str, str],
) -> None:
    if what == "release":
        first = Claim(first.option, first.quantity, first.unit, first.value, release="2.3")
    other = _differ(first, second, what)
    a = _document(1, first, types_[0], dates_[0])
    b = _document(2, other, types_[1], dates_[1])
    assert _entries(authority, a, b) == [], (a.body, b.body)


@SETTINGS
@given(
    claim=claims, value=st.integers(10, 900), types_=st.tuples(types, types), dates_=st.tuples(dates, dates)
)
def test_two_sentences_of_one_document_never_make_an_entry(
    authority: AuthorityRanking, claim: Claim, value: int, types_: tuple[str, str], dates_: tuple[str, str]
) -> None:
    doc = _document(1, claim, types_[0], dates_[0])
    twice = doc.model_copy(
        update={
            "body": doc.body
            + f"\nPour {claim.option}, la {claim.quantity} relevée est de {value} {claim.unit}.\n"
        }
    )
    found = analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=[twice]), authority)
    assert found.contradictions == []


@SETTINGS
@given(
    claim=claims, value=st.integers(10, 900), types_=st.tuples(types, types), dates_=st.tuples(dates, dates)
)
def test_the_same_quantity_with_two_values_makes_one_entry_retaining_the_first_by_authority(
    authority: AuthorityRanking, claim: Claim, value: int, types_: tuple[str, str], dates_: tuple[str, str]
) -> None:
    if dates_[0] == dates_[1] or abs(value - claim.value) <= 0.02 * max(value, claim.value):
        return  # same date: no pair to settle; values within 1 %: they agree
    a = _document(1, claim, types_[0], dates_[0])
    b = _document(2, Claim(claim.option, claim.quantity, claim.unit, value), types_[1], dates_[1])
    entries = _entries(authority, a, b)
    assert len(entries) == 1, (a, b)
    first = min((a, b), key=lambda d: authority.sort_key(d.source_type, d.date, d.id))
    retained, rejected = (1, 2) if first is a else (2, 1)
    assert entries[0].retained == [retained] and entries[0].rejected == [rejected]
    kept = claim.value if first is a else value
    lost = value if first is a else claim.value
    assert f"{kept} {claim.unit} retenu contre {lost} {claim.unit}" in entries[0].reason, entries[0].reason


RELEASES = ["2.3", "2.4", "3.0.1", "5.1"]


def _open_release_document(
    claim: Claim, r1: str, r2: str, where: str, source_type: str, date: str
) -> DocumentText:
    """A document whose claim sentence names no release of its one subject while the document
    names two: in its title, in other sentences (a bench of one release citing reports on another),
    or in the claim's own sentence."""
    o, q = claim.option, claim.quantity
    title = f"{o} {r1} et {o} {r2} : {q}" if where == "title" else f"{o} : {q}"
    stated = f"la {q} relevée est de {claim.value} {claim.unit} dans la configuration de référence"
    if where == "sentence":
        body = f"## Résultats\n\nSur {o} {r1}, {stated}, à comparer aux relevés publiés sur {o} {r2}.\n"
    else:
        body = f"## Résultats\n\nPour {o}, {stated}.\n"
        if where == "body":
            body = f"Version testée : {o} {r1}.\n\n{body}\nCe comportement rejoint les relevés publiés sur {o} {r2}.\n"
    return DocumentText(id="doc-1", date=date, source_type=source_type, title=title, body=body)


@SETTINGS
@given(
    claim=claims,
    value=st.integers(10, 900),
    pair=st.lists(st.sampled_from(RELEASES), min_size=2, max_size=2, unique=True),
    where=st.sampled_from(["title", "body", "sentence"]),
    other_release=st.sampled_from([0, 1, None]),
    types_=st.tuples(types, types),
    dates_=st.tuples(dates, dates),
)
def test_a_figure_whose_release_is_left_open_never_makes_an_entry(
    authority: AuthorityRanking,
    claim: Claim,
    value: int,
    pair: list[str],
    where: str,
    other_release: int | None,
    types_: tuple[str, str],
    dates_: tuple[str, str],
) -> None:
    """Two figures tied to different releases are about two subjects; a document naming two
    releases of a subject without saying which one a figure measures ties it to neither, so it is
    never set against another document's figure (precision before recall)."""
    a = _open_release_document(claim, pair[0], pair[1], where, types_[0], dates_[0])
    release = "" if other_release is None else pair[other_release]
    b = _document(2, Claim(claim.option, claim.quantity, claim.unit, value, release), types_[1], dates_[1])
    assert _entries(authority, a, b) == [], (a.title, a.body, b.title, b.body)


@SETTINGS
@given(
    claim=claims,
    value=st.integers(10, 900),
    release=st.sampled_from(RELEASES),
    types_=st.tuples(types, types),
    dates_=st.tuples(dates, dates),
)
def test_the_same_release_with_two_values_still_makes_one_entry(
    authority: AuthorityRanking,
    claim: Claim,
    value: int,
    release: str,
    types_: tuple[str, str],
    dates_: tuple[str, str],
) -> None:
    """The release rule keeps real contradictions: one document names the release in its title,
    the other once in its body (« Version testée : … »), both measure the same quantity."""
    if dates_[0] == dates_[1] or abs(value - claim.value) <= 0.02 * max(value, claim.value):
        return
    a = _document(
        1, Claim(claim.option, claim.quantity, claim.unit, claim.value, release), types_[0], dates_[0]
    )
    plain = _document(2, Claim(claim.option, claim.quantity, claim.unit, value), types_[1], dates_[1])
    b = plain.model_copy(update={"body": f"Version testée : {claim.option} {release}.\n\n{plain.body}"})
    entries = _entries(authority, a, b)
    assert len(entries) == 1, (a, b)
    assert f"{claim.unit} retenu contre" in entries[0].reason, entries[0].reason


PRICED = {"prix de la licence annuelle": "EUR", "coût du support premium": "EUR", "latence de lecture": "ms"}


@SETTINGS
@given(
    quantities=st.lists(st.sampled_from(sorted(PRICED)), min_size=2, max_size=2, unique=True),
    values=st.tuples(st.integers(10, 900), st.integers(10, 900)),
)
def test_the_recommendation_never_compares_two_quantities(
    quantities: list[str], values: tuple[int, int]
) -> None:
    statements = [
        Statement("st-1", f"{option} — {q.capitalize()} : {v} {PRICED[q]} par site.", (n,))
        for n, (option, q, v) in enumerate(zip(OPTIONS[:2], quantities, values, strict=True), start=1)
    ]
    _, leads = recommendation(statements, OPTIONS, {"st-1": "Coût"})
    assert leads == {}, [s.text for s in statements]


@SETTINGS
@given(quantity=st.sampled_from(sorted(PRICED)), values=st.tuples(st.integers(10, 900), st.integers(10, 900)))
def test_the_recommendation_compares_one_quantity_in_one_unit(quantity: str, values: tuple[int, int]) -> None:
    statements = [
        Statement("st-1", f"{option} — Le {quantity} relevé est de {v} {PRICED[quantity]} par site.", (n,))
        for n, (option, v) in enumerate(zip(OPTIONS[:2], values, strict=True), start=1)
    ]
    _, leads = recommendation(statements, OPTIONS, {"st-1": "Coût"})
    if values[0] == values[1]:
        assert leads == {}
    else:  # EUR and ms: lower is better
        assert leads == {OPTIONS[0] if values[0] < values[1] else OPTIONS[1]: 1}


# Amounts in one unit for different things (a licence, an installation, a support contract).
AMOUNTS = ["licence annuelle", "installation des salles", "contrat de support", "formation des équipes"]


@SETTINGS
@given(
    things=st.lists(st.sampled_from(AMOUNTS), min_size=2, max_size=2),
    scope=st.tuples(st.integers(2, 90), st.integers(2, 9)),
    values=st.tuples(st.integers(1000, 90000), st.integers(1000, 90000)),
)
def test_the_recommendation_compares_what_the_figures_own_clauses_name(
    things: list[str], scope: tuple[int, int], values: tuple[int, int]
) -> None:
    """Two amounts sharing their surroundings (« pour 40 salles et 5 ans ») are one quantity only
    when their own clauses name the same thing, as for a ledger entry (a 5-year support contract is
    not an installation price, issue 28 audit)."""
    rooms, years = scope
    statements = [
        Statement("st-1", f"{option} — Pour {rooms} salles et {years} ans, {thing} : {v} EUR HT.", (n,))
        for n, (option, thing, v) in enumerate(zip(OPTIONS[:2], things, values, strict=True), start=1)
    ]
    _, leads = recommendation(statements, OPTIONS, {"st-1": "Coût"})
    if things[0] != things[1]:
        assert leads == {}, [s.text for s in statements]
    elif values[0] != values[1]:
        assert leads == {OPTIONS[0] if values[0] < values[1] else OPTIONS[1]: 1}


@SETTINGS
@given(
    claim=claims,
    values=st.lists(st.integers(10, 900), min_size=3, max_size=3, unique=True),
    types_=st.lists(types, min_size=3, max_size=3),
)
def test_every_ledger_sentence_is_a_whole_clause_of_the_analyst_reason(
    authority: AuthorityRanking, claim: Claim, values: list[int], types_: list[str]
) -> None:
    """However many sources a note rejects, the ledger writes its reason as whole clauses within the
    grid's 25 words, never a piece of one (« … du 2026-03-17. Et sur la source … », issue 28 audit)."""
    if any(abs(a - b) <= 0.02 * max(a, b) for a in values for b in values if a != b):
        return  # values within 2 %: they agree
    docs = [
        _document(n, Claim(claim.option, claim.quantity, claim.unit, v), t, d)
        for n, (v, t, d) in enumerate(
            zip(values, types_, ["2026-09-30", "2026-05-20", "2026-02-10"], strict=True), start=1
        )
    ]
    notes = _numbered_notes(authority, docs)
    sources = [
        SourceRef(number=n, id=d.id, title=d.title, date=d.date, source_type=d.source_type)
        for n, d in enumerate(docs, start=1)
    ]
    clauses = {c.strip().rstrip(".").casefold() for note in notes for c in note.reason.split(" ; ")}
    for entry in ledger(notes, sources, [], OPTIONS, 25):
        for sentence in re.split(r"(?<=\.) (?=[A-ZÀ-Ý0-9])", entry.reason):
            assert len(sentence.split()) <= 25, entry.reason
            assert sentence.rstrip(".").casefold() in clauses, (sentence, [n.reason for n in notes])
