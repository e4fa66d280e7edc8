"""Issue 23 item 5, the rule behind tests/test_e2e_gemini_quotes.py: a sentence of the dossier in
neither the request's language nor the dossier's own is shown as a quotation, « … » (en)
(veille.language.mark_quotations, applied by sanitize_dossier for every backend). Judged on real
texts (tests/test_answer_language.py's French report prose and English documents): precision first,
no French sentence of a French dossier is ever marked."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_answer_language import ENGLISH_SENTENCES, FRENCH
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry
from veille.language import mark_quotations
from veille.roles.writer import SourceRef
from veille.steps.write import sanitize_dossier

SOURCES = [
    SourceRef(number=n, id=f"doc-{n}", title="t", date="2026-01-01", source_type="note") for n in (1, 2)
]
EN = "The July benchmark measured 1 180 tokens per second for Kestrel under our production load."
FR = "Le banc de juillet mesure 1 180 tokens par seconde pour Kestrel sur notre charge de production."


def test_no_paragraph_of_french_report_prose_is_marked() -> None:
    assert mark_quotations(FRENCH, "fr") == FRENCH


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRENCH), min_size=2, max_size=6), st.sampled_from(ENGLISH_SENTENCES))
def test_an_english_sentence_in_french_prose_is_marked_and_only_it(french: list[str], english: str) -> None:
    # A sentence is what its punctuation delimits: the French one ends with its period.
    head = french[0] if french[0].endswith((".", "!", "?", "…")) else f"{french[0]}."
    items = [*french, f"{head} {english}"]
    marked = mark_quotations(items, "fr")
    assert marked[:-1] == french  # the French prose untouched
    assert marked[-1].startswith(f"{head} ")  # the English sentence quoted, or left (unsure)
    tail = marked[-1][len(head) + 1 :]
    assert tail == english or (tail.startswith("« ") and " » (en)" in tail), tail
    assert mark_quotations(marked, "fr") == marked  # marked once


def test_the_shapes_of_a_marked_sentence() -> None:
    [marked] = mark_quotations([f"{FR} {EN} Fin."], "fr")
    assert marked == f"{FR} « {EN[:-1]} » (en). Fin."
    assert mark_quotations([f"{FR} « {EN[:-1]} » (en)."], "fr") == [f"{FR} « {EN[:-1]} » (en)."]


def test_a_dossier_kept_in_another_language_is_not_turned_into_quotations() -> None:
    # An English answer kept with the seam's alert: its sentences are its own, not quotations.
    english = ENGLISH_SENTENCES[:6]
    assert mark_quotations(english, "fr") == english


DE = "Der Juli-Benchmark hat für Kestrel unter unserer Produktionslast 1 180 Token pro Sekunde gemessen."


def test_under_an_english_request_a_german_quote_is_marked_french_never() -> None:
    # French is code's own language whatever the request (placeholders, the offline engine's
    # prose: tests/corpora/streaming-en): never marked as a quotation.
    prose = ENGLISH_SENTENCES[:6]
    marked = mark_quotations([*prose, DE, FR], "en")
    assert marked == [*prose, f"« {DE[:-1]} » (de).", FR]


def test_sanitize_marks_every_item_and_stays_idempotent() -> None:
    dossier = Dossier(
        synthesis=[CitedText(text=f"{FRENCH[0]}", citations=[1]), CitedText(text=EN, citations=[2])],
        sections=[AxisSection(axis="st-1", points=[KeyPoint(text=f"{FR} {EN}", citations=[1])])],
        contradictions=[LedgerEntry(subject="Débit de Kestrel", retained=[2], rejected=[1], reason=EN)],
        uncertainties=[CitedText(text="Le coût du support de Tamaris reste inconnu pour notre plateforme.")],
        recommendation=[CitedText(text=FR, citations=[1])],
    )
    once, _ = sanitize_dossier(dossier, SOURCES, ["st-1"], language="fr")
    quoted = f"« {EN[:-1]} » (en)"
    assert once.synthesis[1].text.startswith(quoted)
    assert once.sections[0].points[0].text == f"{FR} {quoted}."
    assert once.contradictions[0].reason.startswith(quoted)
    assert once.synthesis[0].text == FRENCH[0] and once.recommendation[0].text == FR
    assert "«" not in once.uncertainties[0].text
    twice, alerts = sanitize_dossier(once, SOURCES, ["st-1"], language="fr")
    assert twice == once and alerts == []
    unmarked, _ = sanitize_dossier(dossier, SOURCES, ["st-1"])  # no language given: nothing marked
    assert "«" not in unmarked.model_dump_json()
