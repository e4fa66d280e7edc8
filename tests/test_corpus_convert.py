"""Conversion of real documents (tests/fixtures/real, SOURCES.md) and hostile bytes to text."""

from __future__ import annotations

import datetime
import gc
import io
import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veille.corpus.convert import (
    ConversionError,
    convert_bytes,
    convert_file,
    detect_format,
    split_front_matter,
    strip_comment_blocks,
)

REAL = Path(__file__).parent / "fixtures" / "real"
_MARKUP = re.compile(
    r"</?(?:html|head|body|div|span|p|a|pre|code|table|tr|td|script|style|meta|link|w:[a-z]+)\b", re.I
)


def test_real_pdf_converts_with_its_text_and_creation_date() -> None:
    doc = convert_file(REAL / "pdflatex-outline.pdf")
    assert doc.format == "pdf"
    assert "Hello, here is some text without a meaning." in doc.text
    assert "1 Foo" in doc.text
    assert isinstance(doc.date, datetime.datetime) and doc.date.year == 2022
    assert doc.origins["date"] == "pdf properties"
    assert _MARKUP.search(doc.text) is None


def test_real_docx_keeps_headings_and_core_properties() -> None:
    doc = convert_file(REAL / "par-known-styles.docx")
    assert doc.format == "docx"
    assert "# Heading 1" in doc.text.splitlines()
    assert "Body Text" in doc.text
    assert doc.author == "Steve Canny" and doc.origins["author"] == "docx properties"
    assert doc.title == "Heading 1" and doc.origins["title"] == "first heading"
    other = convert_file(REAL / "comments-rich-para.docx")
    assert "Some text worthy of note." in other.text and "Paragraph 7" in other.text
    links = convert_file(REAL / "par-hyperlinks.docx")
    assert "Three hyperlinks: the first one here, the second one, and the third." in links.text
    for converted in (doc, other, links):
        assert _MARKUP.search(converted.text) is None


def test_converted_docx_packages_do_not_pile_up_between_collections() -> None:
    """python-docx's parts live in reference cycles holding lxml trees the collector does not count:
    with automatic collection off (the worst case of a large heap), at most one sweep period of
    converted packages stays alive, whatever the number of files converted."""
    import docx.package

    from veille.corpus import formats

    data = (REAL / "par-known-styles.docx").read_bytes()
    gc.collect()
    gc.disable()
    try:
        for _ in range(3 * formats._DOCX_PER_COLLECTION + 5):
            convert_bytes(data, name="report.docx")
        alive = sum(isinstance(o, docx.package.Package) for o in gc.get_objects())
    finally:
        gc.enable()
    assert alive <= formats._DOCX_PER_COLLECTION


@pytest.mark.parametrize(
    ("name", "passage"),
    [
        ("The-Basics.html", "The first thing you must do is create an"),
        ("Closure-Example.html", "A trivial example that creates a new"),
    ],
)
def test_real_html_pages_give_their_text_and_title(name: str, passage: str) -> None:
    doc = convert_file(REAL / name)
    assert doc.format == "html"
    assert passage in " ".join(doc.text.split())
    assert doc.title is not None and "libffi" in doc.title and doc.origins["title"] == "html <title>"
    assert _MARKUP.search(doc.text) is None


def test_markdown_any_case_and_front_matter_kinds() -> None:
    assert detect_format("a/B.MD") == "markdown" and detect_format("x.Markdown") == "markdown"
    assert detect_format("x.bin", "application/pdf; charset=binary") == "pdf"
    assert detect_format("x.odt") is None
    jekyll = convert_file(REAL / "2022-10-20-welcome-to-jekyll.markdown")
    assert jekyll.front_matter_kind == "yaml" and jekyll.front_matter is not None
    assert "categories: jekyll update" in jekyll.front_matter
    assert jekyll.text.startswith("You’ll find this post in your `_posts` directory.")
    docusaurus = convert_file(REAL / "2019-05-29-long-blog-post.md")
    assert "{/* truncate */}" not in docusaurus.text  # an MDX comment never reaches the text
    assert "Use a `{/*` `truncate` `*/}` comment" in docusaurus.text  # its syntax shown in code stays
    assert "This is the summary of a very long blog post," in docusaurus.text


def test_toml_and_pelican_headers_are_split_and_prose_with_a_colon_is_not() -> None:
    front, kind, body, line = split_front_matter('+++\ntitle = "Hugo"\ndate = 2024-01-02\n+++\nBody\n')
    assert (kind, front, body, line) == ("toml", 'title = "Hugo"\ndate = 2024-01-02\n', "Body\n", 5)
    front, kind, body, _ = split_front_matter("Title: My: post\nDate: 2024-01-02 10:20\n\nText")
    assert kind == "pelican" and body == "Text" and front is not None and front.startswith("Title")
    front, kind, body, _ = split_front_matter("Note: this is prose.\n\nMore prose.")
    assert front is None and kind is None and body.startswith("Note:")
    front, kind, body, _ = split_front_matter("---\nno closing line\n")
    assert (front, kind, body) == (None, "unclosed", "---\nno closing line\n")


def test_comment_blocks_never_reach_the_text() -> None:
    body = "A <!-- licence\nheader --> B {% comment %}tmpl{% endcomment %} C {# j #} D <!-- open"
    assert strip_comment_blocks(body) == "A  B  C  D "


def test_broken_and_unsupported_files_raise_one_bounded_error() -> None:
    for data, name in (
        (b"%PDF-1.4\n" + b"x" * 5000, "broken.pdf"),
        (b"PK\x03\x04garbage" * 100, "broken.docx"),
        (b"\xff\xfe\x00", "a.txt"),
        (b"caf\xe9", "latin1.md"),
        (b"", "empty.pdf"),
        (b"data", "x.odt"),
    ):
        with pytest.raises(ConversionError) as info:
            convert_bytes(data, name=name)
        assert str(info.value).startswith(name + " : ")
        assert len(str(info.value)) < 300


def test_zip_bomb_docx_is_refused_before_parsing() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"\x00" * 210_000_000)
    with pytest.raises(ConversionError, match="au-delà de la limite"):
        convert_bytes(buffer.getvalue(), name="bomb.docx")


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=4000), fmt=st.sampled_from(["x.pdf", "x.docx", "x.html", "x.md", "x.txt"]))
def test_any_bytes_convert_or_raise_conversion_error(data: bytes, fmt: str) -> None:
    try:
        doc = convert_bytes(data, name=fmt)
    except ConversionError as exc:
        assert str(exc).startswith(fmt) and len(str(exc)) < 300
    else:
        assert "\x00" not in doc.text and "\x1b" not in doc.text
