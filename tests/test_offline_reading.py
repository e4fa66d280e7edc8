"""Property tests of the offline engine's reading (veille/offline/reading.py, sentences.py).

Documents are assembled from markup pieces (HTML blocks and inline HTML, images, links, inline and
fenced code, footnotes, tables, front matter, comments, Liquid/Hugo templates, attribute lists)
around prose made of a known vocabulary, figures, versions, addresses and abbreviations. For any
such document: no sentence carries markup, every prose word survives in order, no markup word
leaks, and no figure, version, address or abbreviation is cut.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.offline.figures import extract_figures, figure_unit, figure_value, rate_unit
from veille.offline.sentences import fit_clauses, split_plain
from veille.offline.text import split_sentences, table_rows, table_sentences

# Prose words (checked to survive) and markup words (checked never to appear in a sentence).
PROSE = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
MARKUP = ["zulu", "xray", "yankee", "whiskey", "kilo"]
# Tokens that hold periods, commas or spaces and must stay whole, each inside one sentence.
WHOLE = [
    "72.23",
    "1 420",
    "3,4",
    "v1.2.3",
    "e.g.",
    "i.e.",
    "vs.",
    "Dr.",
    "M.",
    "p. ex.",
    "cf.",
    "example.com/a.b",
]
WHOLE += ["config.yaml", "1,420", "8 500-11 000", "−3.5", "No. 5", "J. Martin"]

_word = st.sampled_from(PROSE)
_markup_word = st.sampled_from(MARKUP)

_INLINE_MARKUP = [
    lambda w: f"![{w}](img/{w}.png)",
    lambda w: f'<img src="{w}.png" width="80%">',
    lambda w: f'<span class="{w}">',
    lambda w: "[^1]",
    lambda w: f"{{{{ page.{w} }}}}",
    lambda w: f"{{% include {w}.html %}}",
    lambda w: f"<!-- {w} -->",
    lambda w: f"<sup>{w}</sup>",
    lambda w: f"{{: .{w}}}",
    lambda w: f'{{{{< figure src="{w}.png" caption="{w} 100%" >}}}}',
]
_BLOCK_MARKUP = [
    lambda w: f"<style> table {{ width: 80%; }} .{w} {{ color: red }} </style>",
    lambda w: f'<figure><img src="{w}.png" width="100%"><figcaption>{w} caption</figcaption></figure>',
    lambda w: f"```python\nprint('{w}. Next {w}.')\n```",
    lambda w: f"    {w} = 1  # indented code. {w} Again.",
    lambda w: f"[^1]: {w} footnote text. {w} again.",
    lambda w: f"{{% highlight ruby %}}\n{w}.call(1). {w}.\n{{% endhighlight %}}",
    lambda w: f"<!--\n{w} comment. {w}.\n-->",
    lambda w: f"| {w} | {w} 2 |\n|---|---|\n| {w} | 12 ms |",
    lambda w: f"<div>\n<p>{w} in html. {w}.</p>\n</div>",
]


@st.composite
def sentences(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(Markdown sentence, its prose words in order)."""
    n = draw(st.integers(2, 8))  # a one-word line is a label, not a sentence
    words = [draw(_word) for _ in range(n)]
    parts: list[str] = []
    for i, w in enumerate(words):
        piece = w.capitalize() if i == 0 else w
        choice = draw(st.integers(0, 9))
        if choice == 0:
            piece = f"[{piece}](https://example.org/{draw(_markup_word)}?a=1)"
        elif choice == 1:
            piece = f"*{piece}*"
        elif choice == 2:
            piece = f"{piece} {draw(st.sampled_from(WHOLE))}"
        elif choice == 3:
            piece = f"{piece} {draw(st.sampled_from(_INLINE_MARKUP))(draw(_markup_word))}"
        elif choice == 4:
            piece = f"{piece} `run_job()`"
        parts.append(piece)
    end = draw(st.sampled_from([".", "!", "?", ".[^1]", "."]))
    return " ".join(parts) + end, words


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(Markdown document, its prose words in order)."""
    blocks: list[str] = []
    prose: list[str] = []
    if draw(st.booleans()):
        blocks.append(f"---\ntitle: {draw(_markup_word)}\n---")
    prefix = ""
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 2)) == 0:
            # After a list item (even past a template that vanishes) an indented block continues the
            # item (CommonMark): no indented code there.
            pieces = _BLOCK_MARKUP if not prefix.strip() else _BLOCK_MARKUP[:3] + _BLOCK_MARKUP[4:]
            blocks.append(draw(st.sampled_from(pieces))(draw(_markup_word)))
            continue
        paragraph = [draw(sentences()) for _ in range(draw(st.integers(1, 3)))]
        prefix = draw(st.sampled_from(["", "", "- ", "> ", "1. "]))
        blocks.append(prefix + " ".join(text for text, _ in paragraph))
        prose += [w for _, words in paragraph for w in words]
    blocks.append("[^1]: A footnote kilo.")
    return "\n\n".join(blocks) + "\n", prose


_MARKUP_RE = re.compile(r"<|\]\(|\[\^|\{%|\{\{|`|!\[|-->|\{:")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_no_markup_in_sentences_and_no_prose_word_lost(doc: tuple[str, list[str]]) -> None:
    text, prose = doc
    found = split_sentences(text)
    for sentence in found:
        assert not _MARKUP_RE.search(sentence), (sentence, text)
        assert not set(re.findall(r"[a-z]+", sentence.lower())) & set(MARKUP), (sentence, text)
    joined = [w for s in found for w in re.findall(r"[a-z]+", s.lower()) if w in PROSE]
    assert joined == prose, text


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_word, st.sampled_from(WHOLE), _word), min_size=1, max_size=6))
def test_no_sentence_ends_inside_a_figure_an_abbreviation_or_an_address(
    triples: list[tuple[str, str, str]],
) -> None:
    text = " ".join(f"{a.capitalize()} {token} {b.capitalize()} end." for a, token, b in triples)
    found = split_plain(text)
    assert len(found) == len(triples), found
    for sentence, (_, token, _) in zip(found, triples, strict=True):
        assert token in sentence


def test_sentence_ends_are_found_after_figures_and_abbreviations_of_either_language() -> None:
    text = (
        "Le débit atteint 1 420 Mo/s. La version v1.2.3 corrige la faille, cf. le bulletin. "
        "M. Martin l'a confirmé. It ran in 72.23 seconds. Dr. Smith measured 3,4 ms, i.e. less. "
        "The U.S. team agreed! Prix : 8 500-11 000 EUR."
    )
    assert split_plain(text) == [
        "Le débit atteint 1 420 Mo/s.",
        "La version v1.2.3 corrige la faille, cf. le bulletin.",
        "M. Martin l'a confirmé.",
        "It ran in 72.23 seconds.",
        "Dr. Smith measured 3,4 ms, i.e. less.",
        "The U.S. team agreed!",
        "Prix : 8 500-11 000 EUR.",
    ]


def test_a_sentence_with_code_that_is_not_a_word_is_dropped_not_quoted_with_a_hole() -> None:
    body = "Run `ls -la | grep <x>` first. Then `veille run` works.\n"
    assert split_sentences(body) == ["Then veille run works."]


def test_tables_are_rows_of_cells_never_prose() -> None:
    body = "Une intro.\n\n| Produit | Latence | Prix |\n|---|---|---|\n| **Atlas** | 12 ms | [900 EUR](x) |\n"
    assert split_sentences(body) == ["Une intro."]
    assert table_sentences(body) == ["Atlas : Latence 12 ms.", "Atlas : Prix 900 EUR."]
    assert table_rows(body) == [("Atlas : Latence 12 ms ; Prix 900 EUR.", [0, 1])]


REAL = Path(__file__).parent / "fixtures" / "markdown"


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("*.md") if p.name != "SOURCES.md"))
def test_a_real_document_gives_prose_sentences_only(name: str) -> None:
    """A real README (tests/fixtures/markdown/SOURCES.md): badges, logos, HTML, code and links
    leave no debris; sentences are whole; every prose sentence of a plain paragraph is found."""
    body = (REAL / name).read_text(encoding="utf-8")
    found = split_sentences(body)
    assert len(found) > 30
    for sentence in found:
        assert not _MARKUP_RE.search(sentence), sentence
        assert not re.search(r"https?://|\.(?:png|svg|gif)\b", sentence), sentence
        assert not re.search(r"\b(?:e\.g|i\.e|vs|cf)\.$", sentence), sentence
    # Plain paragraphs (no markup on their lines) come out whole, sentence by sentence.
    plain_lines = [
        line
        for line in body.splitlines()
        if re.fullmatch(r"[A-Z][\w ,.'’\-—()/:]+[.!?]", line) and not re.search(r"[`*_\[<|#]", line)
    ]
    assert len(plain_lines) >= 3
    for line in plain_lines:
        assert all(s in found for s in split_plain(line)), line


def test_figures_follow_the_shared_number_reader() -> None:
    assert extract_figures("Revenue reached $1,705M in 2025.") == ["$1,705M", "2025"]
    assert figure_value("$1,705M") == pytest.approx(1.705e9) and figure_unit("$1,705M") == "m usd"
    english = "It serves 1,420 tokens/s on one GPU."
    assert extract_figures(english) == ["1,420 tokens/s"]
    assert figure_value("1,420 tokens/s", english) == 1420  # English grouping, read in its sentence
    assert figure_value("1,420 tokens/s") is None  # alone it could be a French 1.42: not compared
    quote = "Le devis va de 3 200-4 100 EUR par an."
    assert extract_figures(quote) == ["3 200-4 100 EUR"]  # a range is one figure, never « 3 » and « 100 EUR »
    assert figure_value("3 200-4 100 EUR") is None and rate_unit(quote, "3 200-4 100 EUR") == "eur/an"
    assert extract_figures("La température descend à –7 °C.") == ["–7 °C"]
    assert figure_value("–7 °C") == -7
    assert extract_figures("La 2.7.1 sort en 2026 ; Python 3.12 et v1.2.3 aussi.") == ["2026"]
    assert (
        rate_unit("4 500 EUR par mois", "4 500 EUR") == rate_unit("4 500 EUR/mois", "4 500 EUR") == "eur/mois"
    )
    assert rate_unit("1 250 EUR HT par GPU", "1 250 EUR") == "eur/gpu"


def test_a_sentence_its_source_interrupted_is_not_a_sentence() -> None:
    body = (
        "The vision has two goals:\n\n"
        "* to build a shared understanding of where we are and\n"
        "* to identify where we should be going.\n\n"
        "Reuse the lint, e.g.\n\n```toml\n[lints]\n```\n\n"
        "were also accepted compared to the older forms.\n\n"
        "https://example.org/issues/42\n\n"
        "- la latence reste sous 5 ms sur le banc.\n"
    )
    assert split_sentences(body) == [
        "The vision has two goals:",
        "to identify where we should be going.",
        "la latence reste sous 5 ms sur le banc.",  # a list item may start in lower case
    ]


_CLAUSE = st.lists(_word, min_size=3, max_size=12).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(_CLAUSE, st.sampled_from(["; ", ", but ", ", mais ", ", ", " and "])),
        min_size=1,
        max_size=5,
    )
)
def test_fit_clauses_cuts_between_clauses_only_or_not_at_all(parts: list[tuple[str, str]]) -> None:
    """A cut falls at a semicolon only: a comma before a conjunction may open a verbless phrase
    (« …, mais impossible de … »), and « Mais impossible de … » is a piece of a sentence (issue 28
    audit)."""
    sentence = "".join(clause + sep for clause, sep in parts[:-1]) + parts[-1][0]
    sentence = sentence.capitalize() + "."
    found = fit_clauses(sentence, 12)
    if found is None:
        return
    assert all(len(p.split()) <= 12 for p in found)
    assert " ".join(found).lower().replace(".", "").replace(",", "").replace(";", "").split() == (
        sentence.lower().replace(".", "").replace(",", "").replace(";", "").split()
    )
    after_semicolon = [parts[i + 1][0] for i in range(len(parts) - 1) if parts[i][1] == "; "]
    for part in found[1:]:  # each part after a cut starts where a semicolon left off
        assert any(part.lower().startswith(c.lower()) for c in after_semicolon), part
