"""Issue 36 item 4: the request's language is a hard criterion of the grid (veille.language_checks,
read by the arbiter for every backend), and the offline writer frames a foreign passage in a
sentence of the request's language."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.arbiter import arbitrate
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, render_body
from veille.grid import Grid, load_grid
from veille.language_checks import foreign_quotes, language_instructions, unframed_quotes
from veille.offline.writer import framed_quote
from veille.resources import data_file
from veille.roles.writer import SourceRef
from veille.textstats import count_words, long_sentences, split_sections

GRID = load_grid(data_file("grid.toml"))
PERFECT = dict.fromkeys(GRID.criteria, 5)
SOURCES = [
    SourceRef(number=n, id=f"doc-{n}", title=f"T{n}", date="2026-01-01", source_type="note") for n in (1, 2)
]
ENGLISH = [
    "The July benchmark measured 1 180 tokens per second for Kestrel under our production load",
    "Partner traffic reaches a peak of 18 000 requests per second at month-end closing",
    "Security patches are delivered to support customers seven days before the public release",
]
FRENCH = [
    "Kestrel annonce 1 400 tokens par seconde et par GPU sur des invites courtes",
    "Le débit mesuré au banc d'essai reste stable pendant toute la durée du test",
    "Orvet a corrigé sa faille de sécurité dans la version 2.5 publiée en mars",
]
FRAME = "Le document « Banc d'essai », du 2026-07-01, indique"


def _draft(points: list[str]) -> str:
    dossier = Dossier(
        synthesis=[CitedText(text=t, citations=[1]) for t in FRENCH],
        sections=[AxisSection(axis="st-1", points=[KeyPoint(text=p, citations=[1]) for p in points])],
        uncertainties=[CitedText(text=FRENCH[1], citations=[2])],
        recommendation=[CitedText(text=FRENCH[2], citations=[2])],
    )
    return render_body(dossier, {"st-1": "Performances"})


def test_a_draft_in_english_under_a_french_request_is_never_valid() -> None:
    english = Dossier(
        synthesis=[CitedText(text=t, citations=[1]) for t in ENGLISH],
        sections=[AxisSection(axis="st-1", points=[KeyPoint(text=t, citations=[2]) for t in ENGLISH])],
        recommendation=[CitedText(text=ENGLISH[0], citations=[1])],
    )
    draft = render_body(english, {"st-1": "Performances"})
    verdict = arbitrate(PERFECT, draft, GRID.model_copy(update={"min_words": 0}), SOURCES, "fr")
    assert not verdict.valid
    assert any(i.startswith("Langue : le dossier est rédigé en « en »") for i in verdict.instructions)
    # The same draft judged under an English request breaks no language rule.
    assert language_instructions(draft, "en", GRID) == []


def test_a_french_draft_with_framed_quotes_passes_and_a_bare_quote_does_not() -> None:
    framed = [f"{FRAME} : « {ENGLISH[0]} » (en)", *FRENCH]
    assert language_instructions(_draft(framed), "fr", GRID) == []
    bare = [f"« {ENGLISH[0]} » (en)", *FRENCH]
    found = language_instructions(_draft(bare), "fr", GRID)
    assert [i for i in found if i.startswith("Citation sans phrase")], found
    # A quotation followed by a sentence of its own is still a sentence of quotation alone.
    after = [f"« {ENGLISH[0]} » (en). Ce constat éclaire cet axe de la demande", *FRENCH]
    lines = _draft(after).splitlines()
    assert [q for line in lines for q in unframed_quotes(line, "fr", GRID.min_quote_frame_words)] == [
        ENGLISH[0]
    ]


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(
        st.tuples(st.sampled_from(ENGLISH + FRENCH), st.sampled_from(["", "Selon X", FRAME]), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    share=st.sampled_from([0.3, 0.5, 0.75, 1.0]),
    frame_words=st.integers(min_value=0, max_value=6),
)
def test_every_rule_of_the_request_language_holds_exactly_when_the_arbiter_is_silent(
    items: list[tuple[str, str, bool]], share: float, frame_words: int
) -> None:
    """Whatever mix of framed, unframed and unquoted passages: the arbiter's language instructions
    are empty exactly when every foreign quotation has ``frame_words`` own words in its sentence
    and every section's foreign quotations stay within ``share``."""
    grid = GRID.model_copy(update={"max_quoted_share": share, "min_quote_frame_words": frame_words})
    points = []
    for text, frame, quoted in items:
        body = f"« {text} » (en)" if quoted else text
        points.append(f"{frame} : {body}" if frame else body)
    draft = _draft(points)
    found = language_instructions(draft, "fr", grid)
    own = {"": 0, "Selon X": 1, FRAME: len(["Le", "document", "du", "indique"])}
    unframed = [t for t, frame, quoted in items if quoted and own[frame] < frame_words]
    assert sorted(
        q for line in draft.splitlines() for q in unframed_quotes(line, "fr", frame_words)
    ) == sorted(unframed)
    quoted_words = sum(len(q.split()) for q in foreign_quotes(draft, "fr"))
    assert quoted_words == sum(len(t.split()) for t, _, quoted in items if quoted)
    assert any(i.startswith("Citation sans phrase") for i in found) == bool(unframed)
    body = split_sections(draft)["Points clés"]
    over = sum(count_words(q) for q in foreign_quotes(body, "fr")) > share * count_words(body)
    assert any(i.startswith("Section « Points clés »") for i in found) == over
    assert all(i.startswith(("Langue", "Citation sans phrase", "Section « Points clés »")) for i in found)


@settings(max_examples=100, deadline=None)
@given(
    text=st.sampled_from([*ENGLISH, f"Kestrel — {ENGLISH[0]}", f"{ENGLISH[1]}, {ENGLISH[2].lower()}"]),
    title=st.sampled_from(["Banc", "Une fiche technique au titre très long qui ne tient pas dans la moitié"]),
    date=st.sampled_from(["2026-07-01", ""]),
    limit=st.integers(min_value=14, max_value=40),
)
def test_the_offline_frame_says_who_and_when_within_the_sentence_limit(
    text: str, title: str, date: str, limit: int
) -> None:
    from veille.offline.writer import _frame

    source = SourceRef(number=1, id="doc-1", title=title, date=date, source_type="note")
    shown = framed_quote(text, _frame(source, limit), "fr", limit)
    if not shown:  # cannot be fitted within the limit: left out, never shown bare
        return
    assert "» (en)" in shown
    assert unframed_quotes(shown, "fr", GRID.min_quote_frame_words) == []
    assert long_sentences(f"- {shown} [1]", limit) == []
    assert (date or "non daté") in shown


def test_the_grid_file_states_the_language_entries() -> None:
    grid = load_grid(data_file("grid.toml"))
    assert 0 < grid.max_quoted_share <= 1 and grid.min_quote_frame_words >= 1
    text = data_file("grid.toml").read_text(encoding="utf-8")
    assert "max_quoted_share" in text and "min_quote_frame_words" in text
    assert Grid.model_fields["max_quoted_share"].default == grid.max_quoted_share
