"""Section digests kept per version at ingest, and the heading path shown with a changed section
(issue 40: an edited document re-read by its changed sections, veille/steps/edited_sections.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.corpus.sections import (
    change_digests,
    heading_paths,
    paragraphs,
    section_digest,
    section_digests,
    split_sections,
)
from veille.store.ingest import ingest_corpus
from veille.store.readers import document_snapshot
from veille.store.readers import section_digests as stored_digests

BUNDLED = Path(__file__).resolve().parents[1] / "corpus"


def test_every_version_keeps_its_paragraph_digests_and_an_append_adds_only_its_own(tmp_path: Path) -> None:
    corpus, db = tmp_path / "corpus", tmp_path / "corpus.duckdb"
    shutil.copytree(BUNDLED, corpus, ignore=shutil.ignore_patterns("sources.toml", ".collect-state.json"))
    ingest_corpus(corpus, db)
    before = dict(document_snapshot(db))
    path = corpus / "docs" / "doc-05.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n\nMise à jour : chiffres confirmés.\n", "utf-8")
    ingest_corpus(corpus, db)
    after = dict(document_snapshot(db))
    assert before["doc-05"] != after["doc-05"] and before["doc-02"] == after["doc-02"]
    found = stored_digests(
        db, [("doc-05", before["doc-05"]), ("doc-05", after["doc-05"]), ("doc-02", after["doc-02"])]
    )
    old, new = found[("doc-05", before["doc-05"])], found[("doc-05", after["doc-05"])]
    # One digest per paragraph since issue 40 item 3 (it was one per section, the last one changed):
    # the appended paragraph is the only new digest, every other paragraph keeps its own.
    assert len(old) > 1 and new[:-1] == old and new[-1] not in old
    assert new[-1] == section_digest("Mise à jour : chiffres confirmés.")
    assert ("doc-02", after["doc-02"]) in found  # an unchanged document keeps its row
    assert stored_digests(db, [("doc-05", "no-such-version")]) == {}


def test_a_digest_ignores_spacing_and_sees_any_changed_word() -> None:
    assert section_digest("## Débit\n\nKestrel :  1 180 tokens/s.\n") == section_digest(
        "## Débit\nKestrel : 1 180 tokens/s."
    )
    assert section_digest("## Débit\n\nKestrel : 1 180 tokens/s.") != section_digest(
        "## Débit\n\nKestrel : 1 181 tokens/s."
    )


def test_the_heading_path_is_the_enclosing_headings_outermost_first() -> None:
    body = "intro\n\n# A\n\ntexte a\n\n## B\n\ntexte b\n\n### C\n\ntexte c\n\n## D\n\ntexte d\n\n# E\n\ntexte e\n"
    sections = split_sections(body)
    paths = dict(zip((s.heading for s in sections), heading_paths(body, sections), strict=True))
    assert paths == {None: (), "A": (), "B": ("# A",), "C": ("# A", "## B"), "D": ("# A",), "E": ()}


@settings(max_examples=50, deadline=None)
@given(levels=st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=8))
def test_a_heading_path_holds_only_shallower_headings_seen_before(levels: list[int]) -> None:
    body = "".join(f"{'#' * level} Titre {k}\n\ntexte {k}\n\n" for k, level in enumerate(levels))
    sections = split_sections(body)
    assert len(section_digests(body)) == len(sections)
    for section, path in zip(sections, heading_paths(body, sections), strict=True):
        own = len(section.text(body)) - len(section.text(body).lstrip("#"))
        depths = [len(line) - len(line.lstrip("#")) for line in path]
        assert depths == sorted(depths) and len(set(depths)) == len(depths)  # strictly deeper inward
        assert all(d < own for d in depths)  # only its parents
        assert all(line in body[: section.start] for line in path)  # seen before it


_LINES = st.sampled_from(
    ["# Titre", "## Partie", "texte a", "texte b 12 ms", "", "", "```", "code", "- item"]
)


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(_LINES, max_size=30), added=st.sampled_from(["Mise à jour : 7 %.", "Ajout 9 Go."]))
def test_paragraphs_cover_each_non_blank_line_once_and_an_append_adds_one_digest(
    lines: list[str], added: str
) -> None:
    body = "\n".join(lines) + "\n"
    sections = split_sections(body, max_tokens=8)  # small sections: cuts at paragraphs too
    pieces = paragraphs(body, sections)
    assert [p.n for _, p in pieces] == list(range(len(pieces)))
    covered: list[str] = []
    for n, piece in pieces:
        section = sections[n]
        assert section.start <= piece.start and piece.start + piece.length <= section.start + section.length
        assert piece.text(body).strip()  # never a blank piece
        covered += [line for line in piece.text(body).split("\n") if line.strip()]
    assert covered == [line for line in lines if line.strip()]  # every line, once, in order
    if body.count("```") % 2 == 0:  # outside a code fence, an appended paragraph is its own piece
        before = change_digests(body)
        after = change_digests(body + "\n" + added + "\n")
        assert after[: len(before)] == before and after[len(before) :] == [section_digest(added)]
