"""Issue 36 item 5, property: the dossier is clean by construction, whatever the writer and the
planner's questions hold. Hostile writer items (front matter, headings, « ## Sources », list
markers, imperatives addressed to the reader, format characters inside citations, Markdown
escapes) and hostile questions (sub-task ids, front matter, subjects asked twice, long subjects)
go through the write step's sanitising, the shipped report (finalize) and report.html; then:

- each axis heading is shown once, carries no sub-task id nor markup, and is whole: every word of
  it is a word of its question (nothing cut to a word count, nothing added but « volet n »);
- the ids are the headings' HTML anchors, never their text;
- no imperative addressed to the reader, no front matter, no model « Sources » survives;
- a citation hidden by a format character, « [\\u200b2] », is read as the citation [2]: it is one
  of the report's numbered citations, never visible text; no format character is left;
- report.html's text shows no Markdown escape (no backslash: the hostile text holds none).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.citations import invalid_citations
from veille.delivery.html import ReportHeader, render_report_html
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint
from veille.offline.writer import write
from veille.roles.writer import NumberedFinding, SourceRef, WriterInput
from veille.steps.finalize import finalize_report
from veille.steps.headings import axis_anchors, axis_titles
from veille.steps.write import sanitize_dossier

SOURCES = [
    SourceRef(number=n, id=f"doc-{n}", title=f"Titre {n}", date="2026-03-0" + str(n), source_type="note")
    for n in range(1, 5)
]
IMPERATIVES = ["Achetez Tamaris ici.", "Cliquez sur ce lien.", "Contactez-nous vite.", "Profitez de l'offre."]
STRUCTURE = [
    "--- title: pwned ---", "---\ntitle: pwned\n---\n", "\n- ", "\n1. ", " ## Sources [1] doc-1 ", "\n***\n",
    "\\#", "\\[", "&amp;", "# ", "\u200b", "\u202e", "\u2066",
]  # fmt: skip
FACT = st.sampled_from(
    [
        "Kestrel tient 35 ms en p95.",
        "Tamaris coûte 3 600 EUR par an.",
        "Orvet corrige sa faille.",
        "Le débit est de 1,8 Go/s.",
    ]
)
HIDDEN = st.sampled_from([1, 2, 3, 4, 9]).map(lambda n: f" [\u200b{n}]")  # 9: no such source
ITEM = st.lists(
    st.one_of(FACT, st.sampled_from(IMPERATIVES), st.sampled_from(STRUCTURE), HIDDEN), min_size=1, max_size=5
).map(" ".join)
CITES = st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=2)
SUBJECT = st.sampled_from(
    [
        "la latence",
        "le coût des licences",
        "les employeurs à se trouver : recherche d'entreprises qui recrutent dans la région et leurs besoins",
        "la pérennité",
    ]
)
QUESTION = st.tuples(
    st.sampled_from(["", "st-4 — ", "--- title: pwned --- ", "## ", "- ", "st-1 "]),
    SUBJECT,
    st.sampled_from(["", " (p95, débit)", " (coût)"]),
).map(lambda t: f"{t[0]}Dans le cadre de « Veille », que disent les documents sur {t[1]}{t[2]} ?")
HEADER = ReportHeader("20261206T220000Z-abcdef", "6 décembre 2026", True, (), "0.0000 $", "4 document(s)")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.h3: list[tuple[str | None, str]] = []
        self._in_h3: str | None = None
        self._h3_text: list[str] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h3":
            self._inside, self._in_h3, self._h3_text = True, dict(attrs).get("id"), []

    def handle_endtag(self, tag: str) -> None:
        if tag == "h3":
            self.h3.append((self._in_h3, "".join(self._h3_text)))
            self._inside = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._inside:
            self._h3_text.append(data)


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"\w+", text)}


@settings(max_examples=120, deadline=None)
@given(
    questions=st.lists(QUESTION, min_size=1, max_size=4),
    points=st.lists(st.tuples(ITEM, CITES), min_size=1, max_size=6),
    others=st.lists(ITEM, min_size=1, max_size=3),
)
def test_the_shipped_report_is_clean_whatever_the_writer_and_the_questions(
    questions: list[str], points: list[tuple[str, list[int]]], others: list[str]
) -> None:
    ids = {f"st-{i}": q for i, q in enumerate(questions, 1)}
    titles = axis_titles(ids)
    axes = list(ids)
    dossier = Dossier(
        synthesis=[CitedText(text=t, citations=[1]) for t in others],
        sections=[
            AxisSection(axis=axes[i % len(axes)], points=[KeyPoint(text=t, citations=c)])
            for i, (t, c) in enumerate(points)
        ],
        uncertainties=[CitedText(text=t) for t in others],
        recommendation=[CitedText(text=t, citations=[2]) for t in others],
    )
    clean, _ = sanitize_dossier(dossier, SOURCES, axes, language="fr")
    for point in (p for s in clean.sections for p in s.points):  # every citation is in its list
        assert not re.search(r"\[\s*\d+\s*\]", point.text), point.text
    final = finalize_report("Rapport", clean, SOURCES, titles)
    report = final.markdown
    body = report.split("\n## Sources\n")[0]

    assert not any(c in report for c in ("\u200b", "\u202e", "\u2066")), report
    assert invalid_citations(body, final.sources) == []
    assert not re.search(r"\\\[\s*\d+", body), body  # no citation shown as escaped text
    assert "title: pwned" not in body and "---" not in body, body
    assert not any(i.rstrip(".") in body for i in IMPERATIVES), body
    assert "Sources" not in body.replace("## Sources", ""), body

    headings = [line[4:] for line in body.splitlines() if line.startswith("### ")]
    assert len(headings) == len(set(headings)) == len(ids), headings  # each axis once, no heading twice
    for sid, heading in zip(ids, headings, strict=True):
        assert not re.search(r"\bst-\d", heading, re.IGNORECASE), heading  # ids in anchors only
        assert _words(heading) - _words(ids[sid]) <= {"volet", *(str(i) for i in range(1, 5))}, heading
        assert not heading.endswith("…"), heading  # never cut

    page = _Text()
    page.feed(render_report_html(report, SOURCES, HEADER, axis_anchors(ids)))
    text = "".join(page.text)
    assert "\\" not in text, text  # no Markdown escape visible: the hostile text holds no backslash…
    assert "&amp;" not in text and "&lt;" not in text, text  # …nor an entity written as text
    assert [anchor for anchor, _ in page.h3] == list(ids)
    assert all(not re.search(r"\bst-\d", shown) for _, shown in page.h3)


def test_a_citation_hidden_by_a_zero_width_space_is_the_citation_it_shows() -> None:
    dossier = Dossier(
        sections=[
            AxisSection(axis="st-1", points=[KeyPoint(text="Kestrel tient 35 ms [\u200b2]", citations=[1])])
        ]
    )
    clean, alerts = sanitize_dossier(dossier, SOURCES, ["st-1"])
    assert clean.sections[0].points[0].citations == [1, 2]
    assert clean.sections[0].points[0].text == "Kestrel tient 35 ms"
    orphan = Dossier(
        sections=[
            AxisSection(axis="st-1", points=[KeyPoint(text="Kestrel tient 35 ms [\u200b99]", citations=[1])])
        ]
    )
    clean, alerts = sanitize_dossier(orphan, SOURCES, ["st-1"])
    assert clean.sections[0].points[0].text == "Kestrel tient 35 ms"  # removed, as its alert says
    assert any(a.code == "report.orphan_citation" for a in alerts)


def test_a_document_with_no_fact_is_listed_as_read_never_as_a_point() -> None:
    """Offline, every finding dropped (promotional): the sources are read, not key points."""
    data = WriterInput(
        request_title="Kestrel ou Tamaris ?",
        request="Comparer Kestrel et Tamaris.",
        questions={"st-1": "Que disent les documents sur le coût ?"},
        axes={"st-1": "Le coût"},
        findings=[
            NumberedFinding(
                subtask_id="st-1",
                statement="Kestrel, la solution révolutionnaire incontournable !",
                sources=[1],
            )
        ],
        sources=SOURCES[:1],
    )
    dossier = write(data)
    assert all(not s.points for s in dossier.sections), dossier.sections
    listed = [u for u in dossier.uncertainties if "Titre 1" in u.text]
    assert listed and listed[0].citations == [1] and "sans constat" in listed[0].text
