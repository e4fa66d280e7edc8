"""Sections of long documents and the choice of what to read within a budget (pure functions)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.corpus.sections import select_sections, split_sections

_LINE = st.one_of(
    st.just("# Titre"),
    st.just("## Prix"),
    st.just("```"),
    st.just(""),
    st.text(alphabet="abc kestrel prix 0123456789.", min_size=1, max_size=120),
)


@settings(max_examples=120, deadline=None)
@given(lines=st.lists(_LINE, max_size=200), max_tokens=st.integers(20, 800))
def test_sections_cover_the_body_exactly_in_order(lines: list[str], max_tokens: int) -> None:
    body = "\n".join(lines)
    sections = split_sections(body, max_tokens=max_tokens)
    assert "".join(s.text(body) for s in sections) == body
    assert [s.n for s in sections] == list(range(len(sections)))
    assert all(s.length > 0 for s in sections)


def test_headings_inside_code_fences_do_not_cut() -> None:
    body = "Intro.\n\n# A\n\nTexte A.\n\n```\n# pas un titre\n```\n\n## B\n\nTexte B."
    assert [s.heading for s in split_sections(body)] == [None, "A", "B"]


def test_long_parts_are_cut_at_paragraphs() -> None:
    body = "# Long\n\n" + "\n\n".join("mot " * 100 for _ in range(20))
    sections = split_sections(body, max_tokens=200)
    assert len(sections) > 5 and all(s.heading == "Long" for s in sections)
    assert all(s.text(body).endswith("\n\n") for s in sections[:-1])


@settings(max_examples=80, deadline=None)
@given(
    tokens=st.lists(st.integers(1, 500), min_size=1, max_size=30),
    budget=st.integers(1, 3000),
)
def test_selection_stays_within_budget_keeps_reading_order_and_counts_what_was_read(
    tokens: list[int], budget: int
) -> None:
    texts = [
        f"section {i} " + ("kestrel prix " if i % 3 == 0 else "autre sujet ") * 3 for i in range(len(tokens))
    ]
    chosen = select_sections(texts, tokens, "prix de Kestrel", budget)
    assert list(chosen.chosen) == sorted(chosen.chosen)
    assert chosen.tokens_read == sum(tokens[i] for i in chosen.chosen)
    assert chosen.tokens_total == sum(tokens)
    assert chosen.tokens_read <= budget  # never over, not even by one section
    if sum(tokens) <= budget:
        assert chosen.whole and len(chosen.chosen) == len(tokens)
    elif min(tokens) <= budget:
        assert chosen.chosen  # something fits: something is read


def test_the_relevant_section_is_read_first() -> None:
    texts = [
        "Historique de l'entreprise et de ses fondateurs.",
        "Le prix de Kestrel est de 12 euros.",
        "Annexes.",
    ]
    chosen = select_sections(texts, [400, 400, 400], "Quel est le prix de Kestrel ?", 500)
    assert chosen.chosen == (1,) and not chosen.whole


def test_budget_is_shared_short_documents_whole_long_ones_by_relevant_sections() -> None:
    from veille.corpus.sections import read_within_budget

    long_body = "\n\n".join(
        [f"# Partie {k}\n\n" + ("Historique sans intérêt. " * 60) for k in range(8)]
        + ["# Tarifs\n\nLe prix de Kestrel est de 12 euros par mois."]
    )
    bodies = {"court": "Kestrel coûte 12 euros.", "long": long_body}
    readings = read_within_budget(bodies, "prix de Kestrel", 400)
    assert readings["court"].whole and readings["court"].text == bodies["court"]
    assert not readings["long"].whole and "Le prix de Kestrel est de 12 euros" in readings["long"].text
    assert sum(r.tokens_read for r in readings.values()) <= 400
    assert readings["long"].tokens_total > 2000
    small = read_within_budget(bodies, "prix", 10_000)
    assert all(r.whole for r in small.values())
