"""report.html is escaped by construction: whatever the model or a document wrote, the page holds
only the tags and attributes of the template, and links only where code put them."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.delivery.html import ReportHeader, render_report_html, safe_url
from veille.roles.writer import SourceRef

TEMPLATE_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "dl", "dt", "dd", "span", "br",
    "main", "section", "h2", "h3", "ul", "li", "p", "a", "ol", "strong",
}  # fmt: skip
TEMPLATE_ATTRS = {"lang", "charset", "http-equiv", "content", "name", "class", "href", "rel", "id"}
HEADER = ReportHeader("20261203T020000Z-abcdef", "3 décembre 2026", True, (), "0.0000 $", "3 document(s)")

HOSTILE = st.sampled_from(
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "<a href='javascript:alert(1)'>x</a>",
        '"><svg onload=alert(1)>',
        "</li></ul><iframe src=//evil>",
        "&lt;b&gt;",
        "[1]",
        "[99]",
        "## Sources",
        "{{ 7*7 }}",
    ]
)
TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=30)), max_size=4).map("".join)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            self.attrs.add(name)
            if name == "href":
                self.hrefs.append(value or "")
            if name == "id":
                self.ids.add(value or "")


def _line(text: str) -> str:
    return " ".join(text.split()) or "x"


@settings(max_examples=150, deadline=None)
@given(
    title=TEXT,
    synthesis=TEXT,
    item=TEXT,
    source_title=TEXT,
    source_id=TEXT,
    url=st.one_of(st.none(), HOSTILE, st.just("https://example.org/a?b=1&c=<x>"), st.text(max_size=20)),
)
def test_no_tag_attribute_or_link_comes_from_the_data(
    title: str, synthesis: str, item: str, source_title: str, source_id: str, url: str | None
) -> None:
    markdown = (
        f"# {_line(title)}\n\n## Synthèse\n\n{_line(synthesis)} [1]\n\n"
        f"## Points clés\n\n### {_line(item)}\n\n- {_line(item)} [2]\n\n## Sources\n\n- [1] {_line(item)}\n"
    )
    sources = [
        SourceRef(number=1, id=source_id, title=source_title, date="2026", source_type="x", url=url),
        SourceRef(number=2, id="doc-2", title=source_title, date="2026", source_type="x", kind="web"),
    ]
    page = _Page()
    page.feed(render_report_html(markdown, sources, HEADER))
    assert page.tags <= TEMPLATE_TAGS, page.tags - TEMPLATE_TAGS
    assert page.attrs <= TEMPLATE_ATTRS, page.attrs - TEMPLATE_ATTRS
    allowed = {"#src-1", "#src-2"} | ({url.strip()} if safe_url(url) else set())
    assert set(page.hrefs) <= allowed, set(page.hrefs) - allowed
    assert "#src-1" in page.hrefs and "#src-2" in page.hrefs
    assert {"src-1", "src-2"} <= page.ids


def test_citations_link_their_entry_and_unknown_numbers_stay_text() -> None:
    markdown = "# T\n\n## Synthèse\n\nA [1][2] et [7].\n\n## Sources\n\n- [1] x\n"
    sources = [SourceRef(number=n, id=f"doc-{n}", title="t", date="d", source_type="s") for n in (1, 2)]
    page = _Page()
    html = render_report_html(markdown, sources, HEADER)
    page.feed(html)
    assert page.hrefs == ["#src-1", "#src-2"]
    assert "et [7]." in html


def test_news_come_first_and_the_header_says_partial_and_why() -> None:
    markdown = "# T\n\n## Synthèse\n\nS.\n\n## Nouveautés depuis le 2 décembre 2026\n\n- Nouveau : « d »\n"
    header = ReportHeader("r-1", "3 décembre 2026", False, ("1 volet(s) sur 3 en échec : st-2",), "c", "s")
    html = render_report_html(markdown, [], header)
    assert html.index("Nouveautés depuis") < html.index("<h2>Synthèse")
    assert "Dossier partiel" in html and "1 volet(s) sur 3 en échec : st-2" in html
    assert "Aucune source citée." in html


@given(st.one_of(HOSTILE, st.text(max_size=40)))
def test_safe_url_keeps_only_http_and_https(url: str) -> None:
    kept = safe_url(url)
    assert kept is None or kept.lower().startswith(("http://", "https://"))


def test_a_model_line_that_looks_like_a_heading_cuts_nothing() -> None:
    """Only code's headings open a section, and the bibliography is cut at the last ``## Sources``."""
    markdown = (
        "# T\n\n## Synthèse\n\n## Sources\n\n## Recommandation forgée [1]\n\n"
        "## Points clés\n\n- Kestrel 1 420 tokens/s [1].\n\n## Sources\n\n- [1] x\n"
    )
    sources = [SourceRef(number=1, id="doc-1", title="t", date="d", source_type="s")]
    html = render_report_html(markdown, sources, HEADER)
    assert "Kestrel 1 420 tokens/s" in html
    assert "<h2>Sources</h2>" in html and html.count("<h2>") == 3  # Synthèse, Points clés, Sources
    assert "<p>## Sources</p>" in html and "<p>## Recommandation forgée" in html
