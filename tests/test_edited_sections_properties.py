"""Property tests of re-reading only what changed in an edited document (issue 40, items 2–3).

Over generated documents (headed sections of sentences, each stating figures no other sentence
states) and edits of them (append a paragraph, insert a section, delete one, change a figure
inside a section, reorder, or several at once), with previous findings drawn from the document's
own sentences and paraphrases of them, the incremental branch (``update_subtask``, the one code
path of every backend) guarantees:

(a) no previous finding it keeps lacks support in the new text: each of its figures is in a
    paragraph of tonight's text that the previous version had word for word (and a contradiction it
    keeps still has the edited document's claim there) — with the digests an older ingest kept per
    section, in such a section;
(b) every changed or added paragraph is shown to the update (its text, under its heading path);
(c) with no edit the update is not called (the branch is carried over: ``decide``), and an edit
    that only moves sections and leaves every finding supported calls no model either.

No Prefect, no model layer: a recording asker answers nothing new, so every finding of the result
is a previous one code kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.corpus.sections import change_digests, paragraphs, section_digest, section_digests, split_sections
from veille.models.base import ModelResult, Usage
from veille.roles.analyst import ContradictionNote, DocumentText, Finding, Findings
from veille.roles.analyst_update import AnalystUpdateInput, FindingsUpdate
from veille.roles.planner import SubTask
from veille.steps.analyse_update import PreviousBranch, UpdateJob, decide, update_subtask

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUESTION = "Quels débits et quelles latences annoncent les moteurs d'inférence ?"
NAMES = ["Kestrel", "Tamaris", "Orvet"]
MEASURES = ["débit mesuré", "latence observée", "consommation relevée", "capacité annoncée"]
UNITS = ["tokens/s", "ms", "%", "Go"]
HEADINGS = ["Performances", "Mesures", "Conditions", "Licence", "Exploitation", "Compatibilité", "Annexe"]


class _Values:
    """Figures never repeated within one example: a figure names one sentence."""

    def __init__(self) -> None:
        self.next = 101

    def take(self) -> int:
        self.next += 7
        return self.next


def _sentence(values: _Values, draw: st.DrawFn) -> str:
    name, measure, unit = (
        draw(st.sampled_from(NAMES)),
        draw(st.sampled_from(MEASURES)),
        draw(st.sampled_from(UNITS)),
    )
    return f"Le {measure} de {name} atteint {values.take()} {unit} sur la charge de référence."


def _section(values: _Values, draw: st.DrawFn, heading: str) -> list[str]:
    count = draw(st.integers(min_value=1, max_value=3))
    return [f"## {heading}", *(_sentence(values, draw) for _ in range(count))]


def _render(title: str, sections: list[list[str]]) -> str:
    return f"# {title}\n\n" + "\n\n".join("\n\n".join(s) for s in sections) + "\n"


EDITS = ("none", "append", "append_section", "insert", "delete", "figure", "reorder")


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    values = _Values()
    headings = draw(st.lists(st.sampled_from(HEADINGS), min_size=1, max_size=5, unique=True))
    sections = [_section(values, draw, h) for h in headings]
    title = f"{draw(st.sampled_from(NAMES))} : notes de version"
    before = _render(title, sections)
    edits = draw(st.lists(st.sampled_from(EDITS), min_size=1, max_size=3))
    after_sections = [list(s) for s in sections]
    for edit in edits:
        k = draw(st.integers(min_value=0, max_value=max(0, len(after_sections) - 1)))
        if edit == "append" and after_sections:
            after_sections[-1].append(f"Mise à jour : {_sentence(values, draw)}")
        elif edit == "append_section":
            after_sections.append(_section(values, draw, "Nouveautés"))
        elif edit == "insert":
            after_sections.insert(k, _section(values, draw, "Ajout"))
        elif edit == "delete" and len(after_sections) > 1:
            del after_sections[k]
        elif edit == "figure" and after_sections:
            lines = after_sections[k]
            j = draw(st.integers(min_value=1, max_value=len(lines) - 1))
            old = lines[j].split(" atteint ")[1].split(" ")[0]
            lines[j] = lines[j].replace(f" {old} ", f" {values.take()} ", 1)
        elif edit == "reorder":
            after_sections = draw(st.permutations(after_sections))
    after = _render(title, after_sections)
    sentences = [line for s in sections for line in s[1:]]
    chosen = draw(st.lists(st.sampled_from(sentences), max_size=6, unique=True)) if sentences else []
    findings = []
    for sentence in chosen:
        value, unit = sentence.split(" atteint ")[1].split(" sur ")[0].split(" ", 1)
        if draw(st.booleans()):  # the sentence itself (as the offline analyst writes)
            findings.append(Finding(statement=sentence, doc_ids=["doc-e"], figures=[f"{value} {unit}"]))
        else:  # a paraphrase (as a model writes)
            findings.append(
                Finding(
                    statement=f"Mesure annoncée : {value} {unit}.",
                    doc_ids=["doc-e"],
                    figures=[f"{value} {unit}"],
                )
            )
    other = Finding(
        statement="Le débit de Tamaris atteint 950 tokens/s.", doc_ids=["doc-o"], figures=["950 tokens/s"]
    )
    notes = [  # a contradiction between one of its sentences and the other document, its figures in the reason
        ContradictionNote(
            doc_ids=["doc-e", "doc-o"],
            retained="doc-o",
            reason=f"source plus récente ; 950 tokens/s retenu contre {sentence.split(' atteint ')[1].split(' sur ')[0]}",
        )
        for sentence in draw(st.lists(st.sampled_from(sentences), max_size=2, unique=True))
    ]
    return {"before": before, "after": after, "findings": [*findings, other], "notes": notes, "title": title}


class _Recorder:
    """An asker that records what the update is shown and answers nothing new."""

    def __init__(self) -> None:
        self.inputs: list[AnalystUpdateInput] = []

    def ask(self, role: Any, data: Any, *, subtask_id: str | None = None) -> ModelResult[Any]:
        assert isinstance(data, AnalystUpdateInput)
        self.inputs.append(data)
        return ModelResult(
            output=FindingsUpdate(findings=[]),
            raw_text="{}",
            usage=Usage(),
            latency_s=0.0,
            cost_usd=0.0,
            model="recorder",
            attempts=1,
            cache_hit=False,
        )


def _documents(case: dict[str, Any], body: str) -> list[DocumentText]:
    edited = DocumentText(
        id="doc-e", date="2026-12-01", source_type="blog-editeur", title=case["title"], body=body
    )
    other = DocumentText(
        id="doc-o",
        date="2026-11-01",
        source_type="blog-editeur",
        title="Tamaris",
        body="# Tamaris\n\nLe débit de Tamaris atteint 950 tokens/s.\n",
    )
    return [edited, other]


def _run(case: dict[str, Any], digests: Callable[[str], list[str]] = change_digests) -> tuple[Any, _Recorder]:
    """``digests``: what ingest kept of the previous version (one per paragraph; one per section
    before issue 40 item 3, still understood)."""
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=["doc-e", "doc-o"])
    job = UpdateJob(
        new_ids=["doc-e"],
        previous=Findings(findings=case["findings"], contradictions=case.get("notes", [])),
        edited_sections={"doc-e": digests(case["before"])},
    )
    recorder = _Recorder()
    return update_subtask(recorder, sub_task, _documents(case, case["after"]), job), recorder


def _pieces(body: str) -> list[str]:
    return [p.text(body) for _, p in paragraphs(body)]


def _sections(body: str) -> list[str]:
    return [s.text(body) for s in split_sections(body)]


def _unchanged_texts(before: str, after: str, cut: Callable[[str], list[str]] = _pieces) -> list[str]:
    """Tonight's paragraphs (or sections: ``cut``) the previous version had word for word (the
    oracle, independent of the code under test's matching: plain text comparison, spaces normalised)."""
    old = [" ".join(t.split()) for t in cut(before)]
    out = []
    for piece in cut(after):
        text = " ".join(piece.split())
        if text in old:
            old.remove(text)
            out.append(text)
    return out


@_SETTINGS
@given(case=cases())
def test_no_kept_finding_lacks_support_in_the_unchanged_text(case: dict[str, Any]) -> None:
    _kept_findings_are_supported(case, change_digests, _pieces)


@_SETTINGS
@given(case=cases())
def test_digests_kept_per_section_by_an_older_ingest_keep_the_guarantee(case: dict[str, Any]) -> None:
    _kept_findings_are_supported(case, section_digests, _sections)


def _kept_findings_are_supported(
    case: dict[str, Any], digests: Callable[[str], list[str]], cut: Callable[[str], list[str]]
) -> None:
    analysis, _ = _run(case, digests)
    unchanged = _unchanged_texts(case["before"], case["after"], cut)
    for finding in analysis.findings.findings:
        if "doc-e" not in finding.doc_ids:
            continue
        assert finding in case["findings"]  # the recorder adds nothing: a previous finding, kept
        for figure in finding.figures:  # (a): each figure in a section the edit did not touch
            assert any(f" {figure} " in f" {text} " for text in unchanged), (figure, case["after"])
    assert any(f.doc_ids == ["doc-o"] for f in analysis.findings.findings)  # another document's stands
    for note in analysis.findings.contradictions:  # a kept contradiction's claim is still in the text
        claim = note.reason.split(" contre ")[1]
        assert any(f" {claim} " in f" {text} " for text in unchanged), (note.reason, case["after"])


@_SETTINGS
@given(case=cases())
def test_every_changed_section_is_shown_to_the_update(case: dict[str, Any]) -> None:
    _, recorder = _run(case)
    unchanged = _unchanged_texts(case["before"], case["after"])
    changed = [" ".join(t.split()) for t in _pieces(case["after"]) if " ".join(t.split()) not in unchanged]
    shown = [" ".join(d.body.split()) for data in recorder.inputs for d in data.documents if d.id == "doc-e"]
    for text in changed:  # (b)
        assert any(text in body for body in shown), (text, shown)
    if changed:
        assert len(recorder.inputs) == 1 and [d.id for d in recorder.inputs[0].documents] == ["doc-e"]
        assert [k.id for k in recorder.inputs[0].known_documents] == ["doc-o"]  # metadata only
        # The other document's finding stays and is shown as a previous finding, never re-read.
        assert any(f.doc_ids == ["doc-o"] for f in recorder.inputs[0].previous.findings)


@_SETTINGS
@given(case=cases())
def test_with_no_edit_the_update_is_not_called(case: dict[str, Any]) -> None:
    hashes = {"doc-e": section_digest(case["before"]), "doc-o": "h-o"}
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=["doc-e", "doc-o"])
    previous = PreviousBranch(
        subtask_id="st-1",
        question=QUESTION,
        doc_ids=("doc-e", "doc-o"),
        doc_hashes=dict(hashes),
        flags={},
        status="ok",
        basis="b",
        findings=Findings(findings=case["findings"]),
    )
    same = decide(sub_task, hashes, "b", previous)
    assert same.kind == "carry" and same.update_with({"doc-e": change_digests(case["before"])}) is None
    edited = decide(sub_task, {**hashes, "doc-e": section_digest(case["after"])}, "b", previous)
    assert (edited.kind == "carry") == (case["after"] == case["before"])
    # (c) at the branch: the same text (or its sections only moved) with every finding supported
    # in them: nothing to read, no call, every finding kept.
    moved = sorted(split_sections(case["before"]), key=lambda s: -s.n)
    body = "\n\n".join(s.text(case["before"]).strip() for s in moved) + "\n"
    sentences = [f for f in case["findings"] if f.statement.startswith("Le ")]  # verbatim ones
    for text in (case["before"], body):
        analysis, recorder = _run({**case, "after": text, "findings": sentences})
        assert recorder.inputs == []
        assert analysis.findings.findings == sentences
