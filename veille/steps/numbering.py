"""Sources numbered by code for the writer (seed 004): in order of first citation across branches,
each branch's corpus findings before its web findings; the writer sees numbers only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from veille.citations import SourceRegistry
from veille.plaintext import clean_text
from veille.roles.limits import Bounds
from veille.roles.planner import CatalogueEntry
from veille.roles.writer import NumberedContradiction, NumberedFinding, SourceRef, WriterInput
from veille.steps.analyse import Analysis
from veille.steps.headings import axis_titles
from veille.steps.research import WebResearch

__all__ = ["number_findings"]


def _numbered_findings(
    ok: Sequence[Analysis],
    catalogue: Mapping[str, Any],
    web_by_subtask: Mapping[str, WebResearch],
    pages: Mapping[str, Any],
    registry: SourceRegistry,
) -> list[NumberedFinding]:
    """Each branch's corpus findings, then its web findings, with their sources' numbers."""
    numbered: list[NumberedFinding] = []
    for analysis in ok:
        cited = [(f.statement, [i for i in f.doc_ids if i in catalogue]) for f in analysis.findings.findings]
        research = web_by_subtask.get(analysis.subtask_id)
        if research is not None:
            cited += [(w.statement, [i for i in w.source_ids if i in pages]) for w in research.findings]
        numbered += [
            NumberedFinding(subtask_id=analysis.subtask_id, statement=text, sources=registry.numbers(ids))
            for text, ids in cited
            if ids
        ]
    return numbered


def _numbered_contradictions(
    ok: Sequence[Analysis], catalogue: Mapping[str, Any], registry: SourceRegistry
) -> list[NumberedContradiction]:
    """The analysts' contradiction notes whose documents are sources, retained side first. The same
    contradiction noted by two branches (same documents, same side retained: a same-subject group
    read by two axes, veille.steps.plan_reading) is one contradiction, the first branch's."""
    out: list[NumberedContradiction] = []
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for analysis in ok:
        for note in analysis.findings.contradictions:
            ids = [i for i in note.doc_ids if i in catalogue]
            if len(ids) < 2 or note.retained not in catalogue:
                continue
            kept = registry.number(note.retained)
            rejected = [n for n in registry.numbers(ids) if n != kept]
            if rejected and (kept, tuple(sorted(rejected))) not in seen:
                seen.add((kept, tuple(sorted(rejected))))
                out.append(
                    NumberedContradiction(
                        subtask_id=analysis.subtask_id, retained=[kept], rejected=rejected, reason=note.reason
                    )
                )
    return out


def number_findings(
    analyses: Sequence[Analysis],
    catalogue: Mapping[str, CatalogueEntry] | Mapping[str, Any],
    *,
    request_title: str,
    request: str,
    mandatory_mentions: Sequence[str] = (),
    options: Sequence[str] = (),
    min_words: int = 0,
    max_words: int = 10_000,
    max_sentence_words: int = 25,
    web: Sequence[WebResearch] = (),
    bounds: Bounds | None = None,
) -> tuple[WriterInput, list[SourceRef]]:
    """Writer input with source numbers in order of first citation, stable across branches.

    Branches are read in sub-task order, each branch's corpus findings before its web findings
    (``web``, the ``--web`` research); a document or a web page (one per URI) cited by two branches
    keeps its first number. The writer sees numbers only; ids, titles and URLs stay in the sources.
    """
    pages = {p.id: p for r in web if r.status == "ok" for p in r.sources}
    registry = SourceRegistry({**pages, **catalogue})  # a corpus id never starts with "web-"
    ok = [a for a in analyses if a.status == "ok"]
    # Numbers are given in this order: every branch's findings first, then the contradictions.
    numbered = _numbered_findings(
        ok, catalogue, {r.subtask_id: r for r in web if r.status == "ok"}, pages, registry
    )
    contradictions = _numbered_contradictions(ok, catalogue, registry)
    open_questions = [q for a in ok for q in a.findings.open_questions]
    sources = registry.sources()
    data = WriterInput(
        request_title=request_title,
        request=request,
        questions={a.subtask_id: a.question for a in analyses},
        axes=axis_titles({a.subtask_id: clean_text(a.question) for a in ok}),  # anchors: axis_anchors
        findings=numbered,
        contradictions=contradictions,
        open_questions=list(dict.fromkeys(open_questions)),
        missing_axes=[a.question for a in analyses if a.status == "failed"],
        sources=sources,
        mandatory_mentions=list(mandatory_mentions),
        options=list(options),
        min_words=min_words,
        max_words=max_words,
        max_sentence_words=max_sentence_words,
        bounds=bounds or Bounds(),
    )
    return data, sources
