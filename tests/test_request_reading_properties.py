"""Property test of the request's reading (veille.corpus.request_reading, issue 37 item 1).

Requests generated from known options (written in any case), axes (as a list, numbered questions,
headings or an enumeration « sur A, B et C ») and periods, over a generated corpus that names the
options: :func:`read_request` recovers the options as the corpus writes them, the axes whole and in
order, the period, and a choice; and the reading does not depend on the order of the documents.
"""

from __future__ import annotations

import datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.corpus.request_reading import ProposedAxis, RequestProposal, RequestReading, read_request

# Invented product names (no corpus's), and aspects a watch request asks about.
NAMES = ["Zorblax", "Quimby", "Vartelle", "Morgrane", "Télisse", "Brondak"]
LOWER = ["pgzorn", "kvartis"]  # products their own authors write in lower case
ASPECTS = [
    "latence mesurée",
    "coût des licences",
    "sécurité des données",
    "maintenance corrective",
    "exploitation quotidienne",
    "feuille de route",
]
MONTHS = ["janvier", "mars", "juin", "septembre", "novembre"]
LATEST = datetime.date(2026, 2, 1)  # the corpus's latest full date


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, list[str], list[str], list[str], tuple[object, object]]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=2, max_size=3, unique=True))
    lower = draw(st.lists(st.sampled_from(LOWER), max_size=1, unique=True))
    options = [*names, *lower]
    written = [draw(st.sampled_from([o, o.lower(), o.upper()[:1] + o[1:]])) for o in options]
    if lower:
        written[-1] = lower[0]
    aspects = draw(st.lists(st.sampled_from(ASPECTS), min_size=2, max_size=4, unique=True))
    shape = draw(st.sampled_from(["bullets", "numbered", "headings", "sentence"]))
    period_kind = draw(st.sampled_from(["none", "since", "between", "during"]))
    year = draw(st.integers(min_value=2019, max_value=2025))
    month = draw(st.integers(min_value=0, max_value=len(MONTHS) - 1))
    head = f"Faut-il choisir {', '.join(written[:-1])} ou {written[-1]} ?"
    if period_kind == "since":
        head += f" Nous suivons le sujet depuis {MONTHS[month]} {year}."
        period: tuple[object, object] = (datetime.date(year, [1, 3, 6, 9, 11][month], 1), None)
    elif period_kind == "between":
        head += f" Seuls les documents parus entre {year - 2} et {year} comptent."
        period = (datetime.date(year - 2, 1, 1), datetime.date(year, 12, 31))
    elif period_kind == "during":
        head += f" Seuls les bancs parus en {year} comptent."
        period = (datetime.date(year, 1, 1), datetime.date(year, 12, 31))
    else:
        period = (None, None)
    if shape == "bullets":
        body = "Les axes :\n\n" + "\n".join(f"- {a}" for a in aspects)
    elif shape == "numbered":
        body = "Les axes :\n\n" + "\n".join(f"{n}. {a}" for n, a in enumerate(aspects, 1))
    elif shape == "headings":
        body = "\n\n".join(f"## {a}\n\nCe que disent les mesures." for a in aspects)
    else:  # a sentence enumerates axes from three items on (veille/data/lang/weights.toml)
        aspects = [*aspects, *[a for a in ASPECTS if a not in aspects]][: max(3, len(aspects))]
        body = f"Compare-les sur {', '.join(aspects[:-1])} et {aspects[-1]}."
    expected_titles = [a[:1].upper() + a[1:] for a in aspects]
    return f"{head}\n\n{body}\n", options, expected_titles, [*written], period


def corpus(options: list[str]) -> list[str]:
    docs = []
    for n, option in enumerate(options):
        if option in LOWER:
            docs.append(f"L'extension {option} est testée : avec {option}, la latence reste de {n + 20} ms.")
        else:
            docs.append(
                f"Le banc montre que {option} répond en {n + 10} ms. Selon l'équipe, {option} tient la "
                f"charge et {option} coûte {n + 3} 000 EUR par an."
            )
    docs.append(f"Note de synthèse mise à jour le {LATEST.isoformat()} : aucun produit n'est retenu.")
    docs.append("Menu de la cantine : gratin, salade et fruits de saison.")
    return docs


def as_tuple(reading: RequestReading) -> tuple[object, ...]:
    return (
        reading.axes,
        reading.options,
        reading.period_start,
        reading.period_end,
        reading.kind,
        dict(reading.origin),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(), st.randoms(use_true_random=False))
def test_read_request_recovers_what_the_request_was_built_from(
    built: tuple[str, list[str], list[str], list[str], tuple[object, object]], rnd: object
) -> None:
    text, options, titles, _, period = built
    docs = corpus(options)
    reading = read_request(text, docs, dates=[LATEST.isoformat()])
    assert reading.options == tuple(options)  # as the corpus writes them, in the request's order
    assert [a.title for a in reading.axes] == titles
    assert [a.key for a in reading.axes] == [f"axe-{n}" for n in range(1, len(titles) + 1)]
    assert (reading.period_start, reading.period_end) == period
    assert reading.kind == "choice"
    assert reading.language == "fr"
    # Options identify no axis: an axis's terms are its own words.
    folded = {o.casefold() for o in options}
    assert all(not folded & {t.casefold() for t in a.terms} for a in reading.axes)
    shuffled = list(docs)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert as_tuple(read_request(text, shuffled, dates=[LATEST.isoformat()])) == as_tuple(reading)


POOL = [*NAMES, *LOWER, "Weaviate", "Chroma", "latence"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    requests(),
    st.lists(st.sampled_from(POOL), max_size=5),
    st.lists(st.sampled_from([*ASPECTS, "Gouvernance"]), max_size=3),
)
def test_a_proposal_never_adds_what_the_request_or_the_corpus_does_not_support(
    built: tuple[str, list[str], list[str], list[str], tuple[object, object]],
    proposed_options: list[str],
    proposed_axes: list[str],
) -> None:
    text, options, titles, _, _ = built
    docs = corpus(options)
    proposal = RequestProposal(
        options=tuple(proposed_options),
        axes=tuple(ProposedAxis(a, ("banc", "inventé")) for a in proposed_axes),
    )
    reading = read_request(text, docs, proposal)
    request, folded_docs = text.casefold(), [d.casefold() for d in docs]
    for option in reading.options:  # named by the request and by the corpus, whoever proposed it
        assert option.casefold() in request and any(option.casefold() in d for d in folded_docs)
    assert reading.options[: len(options)] == tuple(options)  # code's reading stands first
    for axis in reading.axes:
        assert axis.title in titles or reading.origin[axis.key] == "planner"
        assert "inventé" not in axis.terms  # a search term the corpus never writes
    assert all(reading.origin[a.key] == "request" for a in reading.axes if a.title in titles)
