"""Real Hugo and Pelican posts (tests/fixtures/real/hugo, tests/fixtures/real/pelican; SOURCES.md) ingested
as a team's folder: title, date, fields and body as the author wrote them, the front matter and the
generators' template tags never in the text."""

from __future__ import annotations

import datetime
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veille.corpus.convert import split_front_matter, strip_template_tags
from veille.store.ingest import ingest_corpus

REAL = Path(__file__).parent / "fixtures" / "real"
_TEMPLATE = re.compile(r"\{\{[<%]|\{%|<!--")

# file -> (title, date, date origin, passages the body holds, fields veille reports as unused)
EXPECTED: dict[str, tuple[str, datetime.date, str, tuple[str, ...], set[str]]] = {
    "hugo/know-your-image-types.md": (
        "Know Your Image Types",
        datetime.date(2015, 1, 5),
        "front_matter",
        ("A picture is worth a thousand words", "the difference between JPG, GIF and PNG files"),
        {"draft"},
    ),
    "hugo/slack-integration.md": (
        "Slack Integration",
        datetime.date(2015, 10, 27),
        "front_matter",
        ("PageProofer is excited to announce it has released an integration with Slack",),
        {"draft"},
    ),
    "hugo/the-abcs-of-great-feedback.md": (
        "The ABCs of great feedback",
        datetime.date(2015, 12, 15),
        "front_matter",
        ("one of the most important traits is the ability to give good feedback", "## A. accurate"),
        set(),
    ),
    "hugo/test-toml.md": (
        "TOML test",
        datetime.date(2017, 6, 28),
        "front_matter",
        ("TOML content",),
        {"tags"},
    ),
    "hugo/test-yaml.md": (
        "YAML test",
        datetime.date(2017, 6, 28),
        "front_matter",
        ("YAML content",),
        {"tags"},
    ),
    "hugo/say-hello-to-doks.md": (
        "Say hello to Doks 👋",
        datetime.date(2020, 11, 4),
        "front_matter",
        ("Introducing Doks, a Hugo theme helping you build modern documentation websites",),
        {"tags", "categories", "contributors", "draft"},
    ),
    "hugo/quick-start.md": (
        "Quick Start",
        datetime.date(2020, 11, 16),
        "front_matter",
        (
            "## Requirements",
            "Doks uses npm (included with Node.js) to centralize dependency management",
            "Not sure which one is for you? Pick the child theme.",
            "git clone https://github.com/h-enk/doks.git my-doks-site",
        ),
        {"menu", "toc", "weight"},
    ),
    "hugo/post-sub01.en.md": (
        "Test post 01 Eng",
        datetime.date(2022, 1, 1),
        "front_matter",
        ("Lorem Ipsum is simply dummy text of the printing and typesetting industry.",),
        {"tags", "categories", "draft"},
    ),
    "pelican/release-2.6.md": (
        "Release Notes for v2.6",
        None,  # no date of its own, none in its text: unknown, never the file's clock (issue 36)
        "unknown",
        ("# Python-Markdown 2.6 Release Notes", "We are pleased to release Python-Markdown 2.6"),
        set(),
    ),
}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, object]], list[str]]:
    root = tmp_path_factory.mktemp("sites")
    (root / "request.md").write_text("---\ntitle: Sites\n---\n\nDemande.\n", encoding="utf-8")
    for kind in ("hugo", "pelican"):
        shutil.copytree(REAL / kind, root / "docs" / kind)
    report = ingest_corpus(root, root / "corpus.duckdb")
    with duckdb.connect(str(root / "corpus.duckdb"), read_only=True) as con:
        cursor = con.execute(
            "SELECT path, title, date, date_origin, author, summary, unknown_fields, body, file_mtime_ns "
            "FROM documents WHERE status = 'valid'"
        )
        names = [d[0] for d in cursor.description]
        rows = {row[0].removeprefix("docs/"): dict(zip(names, row, strict=True)) for row in cursor.fetchall()}
    return rows, [f"{a.code} {a.message}" for a in report.alerts]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_post_loads_as_its_author_wrote_it(
    ingested: tuple[dict[str, dict[str, object]], list[str]], name: str
) -> None:
    rows, _ = ingested
    title, date, origin, passages, unused = EXPECTED[name]
    row = rows[name]
    assert row["title"] == title
    assert (row["date"], row["date_origin"]) == (date, origin)
    body = str(row["body"])
    for passage in passages:
        assert passage in body
    assert unused <= set(row["unknown_fields"])  # type: ignore[call-overload]
    assert _TEMPLATE.search(body) is None, body  # shortcodes, Liquid tags, <!--more--> never text
    # Not one line of the front matter reaches the text.
    front, kind, _, _ = split_front_matter((REAL / name).read_text(encoding="utf-8"))
    assert front is not None and kind in ("yaml", "toml", "pelican")
    for line in front.splitlines():
        if len(line.strip()) > 8:
            assert line.strip() not in body, line


def test_doks_summary_and_pelican_author_are_read(
    ingested: tuple[dict[str, dict[str, object]], list[str]],
) -> None:
    rows, _ = ingested
    assert rows["hugo/say-hello-to-doks.md"]["summary"] == (
        "Introducing Doks, a Hugo theme helping you build modern documentation websites that are secure, "
        "fast, and SEO-ready — by default."
    )
    # Shortcode delimiters go, the link text they sat in stays.
    assert "making it [easy to update]() resources" in str(rows["hugo/quick-start.md"]["body"])


def test_post_whose_only_text_is_a_liquid_tag_is_named_in_one_clear_alert(
    ingested: tuple[dict[str, dict[str, object]], list[str]],
) -> None:
    """pelican-jupyter's post is a ``{% notebook … %}`` tag and nothing else: no text to read."""
    rows, alerts = ingested
    assert "pelican/liquid-tag.md" not in rows
    refused = [a for a in alerts if "liquid-tag.md" in a and a.startswith("ingest.invalid_document")]
    assert len(refused) == 1 and "le corps du document est vide" in refused[0]


_FENCED = st.text(alphabet="{}<>%/* abcx`~\n", max_size=60).filter(lambda t: "```" not in t)


@settings(max_examples=300, deadline=None)
@given(before=st.text(alphabet="{}<>%/* abc\n", max_size=60), code=_FENCED)
def test_fenced_code_is_left_as_written(before: str, code: str) -> None:
    body = f"{before}\n```\n{code}\n```\n"
    assert f"```\n{code}\n```" in strip_template_tags(body)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="{"), max_size=200))
def test_text_without_braces_is_unchanged(text: str) -> None:
    assert strip_template_tags(text) == text


def test_the_one_draft_is_read_and_named_once(
    ingested: tuple[dict[str, dict[str, object]], list[str]],
) -> None:
    """hugo-lunr-ml's post says ``draft: true``; four other posts say ``draft: false``. The draft is read
    (a team's draft is still its knowledge) and named in one note; the others are not."""
    rows, alerts = ingested
    assert "hugo/post-sub01.en.md" in rows
    drafts = [a for a in alerts if "marqué comme brouillon" in a]
    assert len(drafts) == 1 and "post-sub01.en.md" in drafts[0] and "draft: true" in drafts[0]
    assert drafts[0].startswith("ingest.document_note")


def test_the_real_pelican_header_is_read_even_when_the_post_has_no_text() -> None:
    """pelican-jupyter's post: its ``Key: value`` header is Pelican's, read field by field (the post
    itself is refused above for its empty text, not for its header)."""
    from veille.corpus.metadata import read_front_matter

    front, kind, body, _ = split_front_matter(
        (REAL / "pelican" / "liquid-tag.md").read_text(encoding="utf-8")
    )
    data, notes = read_front_matter(front, kind, "liquid-tag.md")
    assert kind == "pelican" and notes == []
    assert data == {
        "title": "With Liquid Tag",
        "slug": "with-liquid-tag",
        "date": "2100-12-31",
        "tags": "Test",
        "author": "Daniel Rodriguez",
    }
    assert strip_template_tags(body).strip() == ""
