"""The documented front-matter limits (docs/corpus-format.md, « Hard limits »: 64 KiB, 512 entries, a
value of 20,000 characters) hold whichever reader builds the front matter — the flat-line fast path,
YAML, TOML, Pelican lines, plain ``key: value`` lines — and a refused file is one alert naming it and
the limit, nothing stored before lost (issue 39 item 6). Before the fix, 600 flat entries, a
25,000-character value and a 933 KB front matter of 16,000 keys were accepted and stored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fixtures.corpus_factory import copy_mini_corpus
from veille.corpus.document import parse_document_fields
from veille.corpus.errors import CorpusError
from veille.corpus.frontmatter import MAX_FRONT_MATTER_BYTES, MAX_KEYS, MAX_SCALAR_CHARS
from veille.store.ingest import ingest_corpus

NAME = "docs/limits.md"


def _yaml_plain(entries: list[tuple[str, str]]) -> str:  # the fast path: plain strings
    return "---\n" + "".join(f"{k}: {v}\n" for k, v in entries) + "---\n\nCorps du document.\n"


def _yaml_typed(entries: list[tuple[str, str]]) -> str:  # a number makes YAML read it (not the fast path)
    return "---\nweight: 3\n" + "".join(f"{k}: {v}\n" for k, v in entries[1:]) + "---\n\nCorps.\n"


def _toml(entries: list[tuple[str, str]]) -> str:
    return "+++\n" + "".join(f'{k} = "{v}"\n' for k, v in entries) + "+++\n\nCorps du document.\n"


def _pelican(entries: list[tuple[str, str]]) -> str:
    return "".join(f"{k.capitalize()}: {v}\n" for k, v in entries) + "\nCorps du document.\n"


def _colon(entries: list[tuple[str, str]]) -> str:  # YAML refuses « a: b »: read as plain lines
    return (
        "---\ntitle: Kestrel: le retour\n"
        + "".join(f"{k}: {v}\n" for k, v in entries[1:])
        + "---\n\nCorps.\n"
    )


def _yaml_list(entries: list[tuple[str, str]]) -> str:  # one key, the rest list items
    items = "".join(f"  - {v}\n" for _, v in entries[2:])
    return f"---\ntitle: T\ntags:\n{items}---\n\nCorps du document.\n"


FORMS: dict[str, Callable[[list[tuple[str, str]]], str]] = {
    "yaml fast path": _yaml_plain,
    "yaml": _yaml_typed,
    "toml": _toml,
    "colon fallback": _colon,
    "yaml list": _yaml_list,
}


def _outcome(text: str) -> CorpusError | None:
    try:
        parse_document_fields(text.encode(), NAME, rel=NAME)
    except CorpusError as exc:
        return exc
    return None


def _entries(n: int, value_chars: int = 1) -> list[tuple[str, str]]:
    return [("title", "Titre")] + [(f"k{i}", "v" * value_chars) for i in range(1, n)]


@settings(max_examples=60, deadline=None)
@given(form=st.sampled_from(sorted(FORMS)), n=st.integers(1, 2 * MAX_KEYS))
def test_a_front_matter_is_refused_exactly_when_it_holds_more_than_512_entries(form: str, n: int) -> None:
    text = FORMS[form](_entries(n))
    # Entries: mapping entries and list items; the list form has 'title', 'tags' and n - 2 items.
    entries = n if form != "yaml list" else 2 + max(0, n - 2)
    error = _outcome(text)
    if entries > MAX_KEYS:
        assert error is not None and str(error).startswith(NAME + " : "), form
        assert f"plus de {MAX_KEYS}" in error.problem, str(error)
    else:
        assert error is None, str(error)


@settings(max_examples=40, deadline=None)
@given(
    form=st.sampled_from(["yaml fast path", "yaml", "toml", "colon fallback", "pelican"]),
    chars=st.integers(MAX_SCALAR_CHARS - 50, MAX_SCALAR_CHARS + 5_000),
)
def test_a_value_over_20000_characters_is_refused_whatever_the_reader(form: str, chars: int) -> None:
    build = _pelican if form == "pelican" else FORMS[form]
    text = build([("title", "Titre"), ("summary", "x" * chars), ("author", "A")])
    error = _outcome(text)
    if chars > MAX_SCALAR_CHARS:
        assert error is not None and f"au-delà de {MAX_SCALAR_CHARS}" in error.problem, form
        assert str(error).startswith(NAME + " : ")
    else:
        assert error is None, str(error)


def test_a_933_kb_front_matter_of_16000_keys_is_refused_by_its_size() -> None:
    text = _yaml_plain(_entries(16_000, value_chars=50))
    assert len(text) > 900_000
    error = _outcome(text)
    assert error is not None and f"au-delà de {MAX_FRONT_MATTER_BYTES}" in error.problem


def test_a_refused_file_is_one_alert_naming_it_and_the_limit_and_nothing_stored_is_lost(
    tmp_path: Path,
) -> None:
    corpus = copy_mini_corpus(tmp_path / "corpus")
    db = tmp_path / "veille.duckdb"
    first = ingest_corpus(corpus, db)
    assert first.skipped == 0 and first.documents > 0
    for name, entries in (
        ("many.md", _entries(600)),
        ("long.md", [("title", "T"), ("summary", "x" * 25_000)]),
    ):
        (corpus / "docs" / name).write_text(_yaml_plain(entries), encoding="utf-8")
    second = ingest_corpus(corpus, db)
    refused = [a for a in second.alerts if a.code == "ingest.invalid_document"]
    assert sorted(a.subject for a in refused) == ["docs/long.md", "docs/many.md"]
    by_file = {a.subject: a.message for a in refused}
    assert f"plus de {MAX_KEYS}" in by_file["docs/many.md"]
    assert f"au-delà de {MAX_SCALAR_CHARS}" in by_file["docs/long.md"]
    assert second.skipped == 2 and second.documents == first.documents and second.removed == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = con.execute("SELECT max(length(unknown_fields::VARCHAR)) FROM documents").fetchone()
        paths = {p for (p,) in con.execute("SELECT path FROM documents WHERE status = 'valid'").fetchall()}
    finally:
        con.close()
    assert stored is not None and (stored[0] or 0) < 1_000  # no row carries 600 field names
    assert "docs/many.md" not in paths and len(paths) == first.documents
