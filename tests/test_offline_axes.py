"""Offline planner, request shapes and languages (issue 12, the held-out corpus of its second pass):
axes read from an e-mail's indirect questions, paragraphs that never run into each other, a list of
products that is no list of axes, and a document in another language kept on less shared wording.

Synthetic requests and catalogues only (products « Atlas », « Borea », « Cirrus »): each test fails
if its rule is removed.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veille.offline.analyst import analyse
from veille.offline.authority import AuthorityRanking
from veille.offline.axes import parse_axes
from veille.offline.relevance import Context, PlannerTuning, relevant
from veille.roles.analyst import AnalystInput, DocumentText
from veille.roles.planner import CatalogueEntry, PlannerInput

TERMS = ["Atlas", "Borea", "Cirrus"]

EMAIL = """Objet : équipement des salles — note pour le comité

Bonjour,

Comme convenu hier, il me faut une note sur les trois systèmes encore en lice : Atlas, Borea et Cirrus.

Le comité voudra savoir si on entend et si on voit bien dans nos salles, ce que ça coûte vraiment sur
5 ans, où en sont la sécurité et le RGPD — le DPO attend notre réponse — et comment l'équipe va
l'exploiter, avec des fournisseurs encore là dans cinq ans.

Merci,

Claire
"""


def test_an_emails_indirect_questions_are_its_axes() -> None:
    labels = [a.label for a in parse_axes(EMAIL, TERMS)]
    assert labels == [
        "Si on entend et si on voit bien dans nos salles",  # one question asked twice the same way
        "Ce que ça coûte vraiment sur 5 ans",
        "Où en sont la sécurité et le RGPD",  # the aside between dashes is not part of it
        "Comment l'équipe va l'exploiter, avec des fournisseurs encore là dans cinq ans",
    ], labels


def test_a_line_without_punctuation_does_not_run_into_the_next_paragraph() -> None:
    """« Objet : … » and « Bonjour, » used to join the next paragraph, whose commas then read as
    an enumeration of axes after the colon."""
    request = "Objet : visio des salles\n\nBonjour,\n\nComme convenu, voici la demande, merci d'avance.\n"
    assert parse_axes(request, TERMS) == []


def test_an_enumeration_that_names_a_product_is_no_list_of_axes() -> None:
    request = "Compare-les selon la latence, le coût sur 3 ans, Borea et la sécurité des correctifs."
    assert parse_axes(request, TERMS) == []
    aspects = "Compare-les selon la latence, le coût sur 3 ans, la pérennité et la sécurité des correctifs."
    assert [a.label for a in parse_axes(aspects, TERMS)] == [
        "Latence",
        "Coût sur 3 ans",
        "Pérennité",
        "Sécurité des correctifs",
    ]


def _entry(doc_id: str, title: str, summary: str) -> CatalogueEntry:
    return CatalogueEntry(id=doc_id, date="2026-05-01", source_type="fiche", title=title, summary=summary)


def _kept(*extra: CatalogueEntry) -> set[str]:
    catalogue = [
        _entry("d-1", "Offre de prix Atlas : abonnement Atlas Cloud pour les salles",
               "Le devis Atlas chiffre l'abonnement Atlas Cloud et le micrologiciel Studio pour nos salles sur 5 ans."),
        _entry("d-2", "Offre de prix Borea : systèmes de salle et garantie",
               "Le devis Borea chiffre les systèmes de salle, la pose et la garantie sur 5 ans."),
        _entry("d-3", "Offre de prix Cirrus : systèmes de salle et licences",
               "Le devis Cirrus chiffre les systèmes de salle, les licences et le support sur 5 ans."),
        *extra,
        # Other projects of the same shared folder: rare words are rare among them.
        _entry("x-1", "Restaurant d'entreprise : menus de printemps", "Les nouveaux menus et formules du restaurant."),
        _entry("x-2", "Badges d'accès au bâtiment B", "Calendrier de distribution des nouveaux badges."),
        _entry("x-3", "Plan de mobilité : forfait vélo", "Le forfait vélo est revalorisé et de nouveaux abris ouvrent."),
        _entry("x-4", "Inventaire de biodiversité du site", "Les espèces observées près du bassin au printemps."),
    ]  # fmt: skip
    data = PlannerInput(
        request_title="Systèmes de salle : Atlas, Borea ou Cirrus ?",
        request="Comparer le coût sur 5 ans des systèmes de salle Atlas, Borea et Cirrus.",
        terms=TERMS,
        catalogue=catalogue,
        max_subtasks=4,
        max_docs=8,
        with_summaries=True,
    )
    axes = parse_axes(data.request, data.terms)
    return {d.id for d in relevant(Context(data, axes, frozenset(), PlannerTuning.from_data()))}


def test_a_document_in_another_language_is_kept_on_less_shared_wording() -> None:
    """An English datasheet naming Atlas shares only names with the French offer (« Studio »,
    « Cloud », « micrologiciel »/"firmware" not even that): half the rare-word weight keeps it."""
    english = _entry("d-4", "Atlas Studio 40: video bar for meeting rooms with the Atlas Cloud service",
                     "The Atlas Studio 40 bar and the Atlas Cloud service are managed from one console.")  # fmt: skip
    assert "d-4" in _kept(english)
    # The same shared wording in the request's language is not enough: its words could have matched.
    french = _entry("d-4", "Atlas Studio 40 : la barre du club photo au Cloud de la mairie",
                    "Le club photo présente la barre Studio 40 et le Cloud de la mairie aux habitants.")  # fmt: skip
    assert "d-4" not in _kept(french)


def test_a_later_fix_settles_a_post_saying_the_flaw_is_not_fixed(authority: AuthorityRanking) -> None:
    forum = DocumentText(
        id="d-1", date="2026-05-12", source_type="forum", title="Forum : faille non corrigée sur les caméras Atlas EC-4 ?",
        body="## Message\n\nDeux mois plus tard, la faille des caméras Atlas EC-4 n'est toujours pas corrigée.\n",
    )  # fmt: skip
    bulletin = DocumentText(
        id="d-2", date="2026-06-22", source_type="bulletin-securite", title="Atlas Security Advisory: EC-4 camera web interface",
        body="## Fix\n\nFirmware 5.4.2 for the Atlas EC-4 cameras fixes the authentication bypass of the web interface.\n",
    )  # fmt: skip
    question = "Que disent les documents sur la sécurité des caméras pour Atlas ?"
    result = analyse(
        AnalystInput(subtask_id="st-1", question=question, documents=[forum, bulletin]), authority
    )
    assert [(n.doc_ids, n.retained) for n in result.contradictions] == [(["d-1", "d-2"], "d-2")]


_LOWER = st.text(alphabet="abcdefghijklmnopqrstuvwxyzéè", min_size=3, max_size=9)
_NAME = _LOWER.map(str.capitalize)


@given(
    before=st.lists(_LOWER, min_size=1, max_size=3),
    names=st.lists(_NAME, min_size=2, max_size=4, unique=True),
    after=st.lists(_LOWER, min_size=0, max_size=3),
)
def test_a_comma_between_two_names_never_cuts_a_facet(
    before: list[str], names: list[str], after: list[str]
) -> None:
    """« stabilité de Atlas, Borea et Cirrus sur la charge »: the commas of an enumeration of
    names are the enumeration's, not the axis's; the other commas still cut facets. Fails with the
    plain cut at every comma (a facet « Borea et Cirrus sur la charge » of its own)."""
    enumeration = ", ".join(names[:-1]) + f" et {names[-1]}"
    phrase = f"stabilité de {enumeration} sur la charge"
    request = f"- Performances : {', '.join([*before, phrase, *after])}\n- Coûts : licence, support\n"
    facets = parse_axes(request, names)[0].facets
    assert facets == [*before, phrase, *after]
