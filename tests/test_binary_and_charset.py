"""Binary content is refused whatever the extension, and an HTML page's undeclared charset is
detected (issue 39 item 6). Before: 3,000 random bytes named ``.html`` were ingested as garbled text
(the same bytes as ``.md`` were refused), and a Latin-1 page without a declared charset became
« ╔tķ Ó Paris »."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.fixtures.corpus_factory import copy_mini_corpus
from veille.corpus.convert import ConversionError, convert_bytes
from veille.corpus.sniff import binary_reason
from veille.store.ingest import ingest_corpus

TEXT_NAMES = ("x.md", "x.markdown", "x.txt", "x.html", "x.htm")


def _refusal(data: bytes, name: str) -> str | None:
    try:
        convert_bytes(data, name=name)
    except ConversionError as exc:
        return exc.problem
    return None


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.integers(200, 5_000))
def test_random_bytes_are_refused_as_binary_under_every_text_extension(seed: int, size: int) -> None:
    data = random.Random(seed).randbytes(size)
    problems = {name: _refusal(data, name) for name in TEXT_NAMES}
    assert all(p is not None and p.startswith("contenu binaire") for p in problems.values()), problems
    assert len(set(problems.values())) == 1  # the same bytes, the same refusal, whatever the name


@settings(max_examples=60, deadline=None)
@given(head=st.binary(max_size=300), tail=st.binary(max_size=300), name=st.sampled_from(TEXT_NAMES))
def test_a_nul_byte_is_binary_whatever_the_extension(head: bytes, tail: bytes, name: str) -> None:
    data = head + b"\x00" + tail
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return  # UTF-16: a NUL is text there (announced by the BOM)
    problem = _refusal(data, name)
    assert (
        problem is not None and problem.startswith("contenu binaire") and "octet NUL à la position" in problem
    )


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=400,
).filter(lambda t: all(c in "\t\n\r\f\x1b" or ord(c) >= 0x20 for c in t))


@settings(max_examples=120, deadline=None)
@given(text=_TEXT, encoding=st.sampled_from(["utf-8", "utf-16", "cp1252", "latin-1", "shift_jis", "gb18030"]))
def test_text_in_any_charset_is_never_called_binary(text: str, encoding: str) -> None:
    data = text.encode(encoding, errors="ignore")
    assert binary_reason(data) is None, (encoding, data[:60])


def test_a_pdf_named_html_is_refused_as_binary() -> None:
    data = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Length 5 >>\nstream\n\x00\x01\x02\x03\x04\nendstream\n"
    expected = f"contenu binaire (octet NUL à la position {data.index(0)}), pas un fichier texte"
    assert _refusal(data, "rapport.html") == expected


FRENCH_WORDS = [
    "été",
    "à",
    "Paris",
    "où",
    "les",
    "élèves",
    "déjà",
    "très",
    "nombreux",
    "ont",
    "préféré",
    "la",
    "rentrée",
    "après",
    "les",
    "fêtes",
    "où",
    "l'on",
    "a",
    "créé",
    "un",
    "équipement",
    "coûteux",
    "réservé",
    "à",
    "la",
    "région",
    "île",
    "côté",
    "forêt",
    "système",
    "hôpital",
]


@settings(max_examples=25, deadline=None)
@given(
    words=st.lists(st.sampled_from(FRENCH_WORDS), min_size=12, max_size=80),
    encoding=st.sampled_from(["latin-1", "cp1252"]),
)
# Found by hypothesis: a short page dense in accents whose best guess was cp775 (box drawing).
@example(
    words=["été", "été", "coûteux", "été", "à", "été", "à", "côté", "côté", "à", "été", "à"],
    encoding="latin-1",
)
def test_an_undeclared_latin_page_is_read_as_written(words: list[str], encoding: str) -> None:
    sentence = " ".join(words)
    page = (
        "<html><head><title>Été à Paris</title></head><body><article><h1>Été à Paris</h1>"
        f"<p>{sentence.capitalize()}.</p><p>{sentence}.</p></article></body></html>"
    )
    converted = convert_bytes(page.encode(encoding), name="page.html")
    assert converted.title == "Été à Paris"
    assert sentence in converted.text, converted.text[:200]


def test_a_declared_charset_still_decides() -> None:
    page = (
        '<html><head><meta charset="koi8-r"><title>Отчёт</title></head>'
        "<body><article><p>Производительность движка выросла на треть за квартал.</p></article></body></html>"
    )
    converted = convert_bytes(page.encode("koi8-r"), name="otchet.html")
    assert converted.title == "Отчёт" and "Производительность" in converted.text


@pytest.mark.parametrize("name", ["bruit.html", "bruit.md"])
def test_an_ingested_binary_file_is_one_alert_naming_it(tmp_path: Path, name: str) -> None:
    corpus = copy_mini_corpus(tmp_path / "corpus")
    (corpus / "docs" / name).write_bytes(random.Random(7).randbytes(3_000))
    report = ingest_corpus(corpus, tmp_path / "veille.duckdb")
    refused = [a for a in report.alerts if a.subject == f"docs/{name}"]
    assert [a.code for a in refused] == ["ingest.invalid_document"]
    assert "contenu binaire" in refused[0].message and report.skipped == 1


def test_a_page_stored_garbled_before_version_5_is_read_again_once(tmp_path: Path) -> None:
    corpus = copy_mini_corpus(tmp_path / "corpus")
    page = (
        "<html><head><title>Été à Paris</title></head><body><article><h1>Été à Paris</h1>"
        "<p>Les élèves ont été très nombreux à Paris cet été, déjà même avant la rentrée.</p>"
        "</article></body></html>"
    )
    (corpus / "docs" / "paris.html").write_bytes(page.encode("latin-1"))
    db = tmp_path / "veille.duckdb"
    ingest_corpus(corpus, db)
    con = duckdb.connect(str(db))
    try:  # what version 4 stored: the page garbled, its conversion cached, migration 5 not applied
        con.execute("UPDATE documents SET title = '╔tķ Ó Paris', body = '╔tķ Ó Paris' WHERE id = 'paris'")
        con.execute("UPDATE conversions SET title = '╔tķ Ó Paris', text = '╔tķ Ó Paris'")
        con.execute("DELETE FROM schema_migrations WHERE version = 5")
    finally:
        con.close()
    report = ingest_corpus(corpus, db)
    assert report.updated == 1  # the same bytes, read again and stored again
    con = duckdb.connect(str(db), read_only=True)
    try:
        title, body = con.execute("SELECT title, body FROM documents WHERE id = 'paris'").fetchone() or (
            "",
            "",
        )
    finally:
        con.close()
    assert title == "Été à Paris" and "élèves" in body
