"""A figure-less contradiction (one document « prime sur » another) needs something to settle.

The offline analyst settles an older document by a later one without any figure differing in two
cases: a ``supersedes`` rule of veille/data/authority.toml (an official announcement after a forum
post) or a more authoritative source after one that hedges. Either way the older document must
state something unverified or unfixed (« rumeur », « aucun correctif »): two sources that merely
speak of one product do not contradict each other. And a document about another release line of
the product (Orvet 2.7) does not settle a doubt about this one (Orvet 2.5). Found on the bundled
corpus when a roadmap and a forum thread were first read in one branch; the properties below
generate their own products, releases and texts.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.offline.analyst import analyse
from veille.offline.authority import AuthorityRanking
from veille.roles.analyst import AnalystInput, DocumentText

PRODUCTS = ["Alvera", "Bruneau", "Corvex"]
TOPICS = ["ordonnanceur de requêtes", "reprise après incident", "chiffrement des sauvegardes"]
# (older, newer) types: a ``supersedes`` rule, and a rank order with no rule between them.
PAIRS = [("forum", "annonce-officielle"), ("article-presse", "annonce-officielle"), ("forum", "audit")]
QUESTION = "Que disent les documents sur la stabilité d'Alvera, Bruneau et Corvex ?"
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _pair(
    product: str, topic: str, types: tuple[str, str], old: str, new: str, hedge: bool
) -> list[DocumentText]:
    doubt = " Selon une rumeur, le correctif serait abandonné." if hedge else ""
    older = DocumentText(
        id="doc-1",
        date="2026-03-02",
        source_type=types[0],
        title=f"{product} {old} : le {topic} en question",
        body=f"## Retour\n\nNous utilisons {product} {old} en production pour le {topic}.{doubt}\n",
    )
    newer = DocumentText(
        id="doc-2",
        date="2026-09-14",
        source_type=types[1],
        title=f"{product} {new} : le {topic} et la feuille de route",
        body=f"## Annonce\n\n{product} {new} apporte un nouveau {topic} pour la production.\n",
    )
    return [older, newer]


def _notes(authority: AuthorityRanking, docs: list[DocumentText]) -> list[object]:
    return list(
        analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=docs), authority).contradictions
    )


@SETTINGS
@given(product=st.sampled_from(PRODUCTS), topic=st.sampled_from(TOPICS), types=st.sampled_from(PAIRS))
def test_a_later_source_never_settles_one_that_hedges_nothing(
    authority: AuthorityRanking, product: str, topic: str, types: tuple[str, str]
) -> None:
    docs = _pair(product, topic, types, "2.5", "2.5", hedge=False)
    assert _notes(authority, docs) == [], [d.body for d in docs]


@SETTINGS
@given(
    product=st.sampled_from(PRODUCTS),
    topic=st.sampled_from(TOPICS),
    lines=st.sampled_from([("2.5", "2.7"), ("3.1", "4.0"), ("1.2.4", "1.3")]),
)
def test_a_source_about_another_release_line_never_settles_a_doubt(
    authority: AuthorityRanking, product: str, topic: str, lines: tuple[str, str]
) -> None:
    docs = _pair(product, topic, ("forum", "audit"), lines[0], lines[1], hedge=True)
    assert _notes(authority, docs) == [], [d.body for d in docs]


@SETTINGS
@given(
    product=st.sampled_from(PRODUCTS),
    topic=st.sampled_from(TOPICS),
    types=st.sampled_from(PAIRS),
    lines=st.sampled_from([("2.5", "2.5"), ("2.5", "2.5.1"), ("3.1.2", "3.1")]),
)
def test_a_hedged_claim_is_settled_by_a_later_source_on_its_line(
    authority: AuthorityRanking, product: str, topic: str, types: tuple[str, str], lines: tuple[str, str]
) -> None:
    docs = _pair(product, topic, types, lines[0], lines[1], hedge=True)
    notes = _notes(authority, docs)
    assert len(notes) == 1, [d.body for d in docs]
    assert notes[0].retained == "doc-2"  # type: ignore[attr-defined]
