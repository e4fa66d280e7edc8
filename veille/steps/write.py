"""The write step (seed 004): sources numbered by code, the writer's draft, the shipped report.

The writer sees source numbers only; ids and titles stay in state. After review, the report is
assembled by code: orphans stripped, citations renumbered, ``## Sources`` built from the registry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from veille.alerts import Alert
from veille.citations import (
    SourceRegistry,
    bibliography,
    invalid_citations,
    normalize_citations,
    renumber_citations,
    strip_citations,
)
from veille.corpus.request import Request
from veille.grid import Grid
from veille.roles.base import Asker
from veille.roles.planner import CatalogueEntry
from veille.roles.writer import WRITER, NumberedFinding, SourceRef, WriterInput
from veille.steps.analyse import Analysis
from veille.store.readers import source_metadata
from veille.textstats import SOURCES_HEADING, UNCERTAIN_SECTION, section_order, split_sections

__all__ = [
    "FinalReport",
    "WrittenDraft",
    "assemble_report",
    "ensure_missing_axes",
    "finalize_report",
    "number_findings",
    "strip_title",
    "write_draft",
    "write_sourced_draft",
]


def number_findings(
    analyses: Sequence[Analysis],
    catalogue: Mapping[str, CatalogueEntry] | Mapping[str, Any],
    *,
    request_title: str,
    request: str,
    mandatory_mentions: Sequence[str] = (),
    min_words: int = 0,
    max_words: int = 10_000,
    max_sentence_words: int = 25,
) -> tuple[WriterInput, list[SourceRef]]:
    """Writer input with source numbers in order of first citation, stable across branches.

    Branches are read in sub-task order; a document cited by two branches keeps its first number.
    The writer sees numbers only; ids and titles stay in the returned sources.
    """
    registry = SourceRegistry(catalogue)
    numbered: list[NumberedFinding] = []
    contradictions: list[str] = []
    open_questions: list[str] = []
    ok = [a for a in analyses if a.status == "ok"]
    for analysis in ok:
        for f in analysis.findings.findings:
            ids = [i for i in f.doc_ids if i in catalogue]
            if not ids:
                continue
            numbered.append(
                NumberedFinding(
                    subtask_id=analysis.subtask_id, statement=f.statement, sources=registry.numbers(ids)
                )
            )
    for analysis in ok:
        for note in analysis.findings.contradictions:
            ids = [i for i in note.doc_ids if i in catalogue]
            if len(ids) < 2 or note.retained not in catalogue:
                continue
            cited = "".join(f"[{n}]" for n in registry.numbers(ids))
            kept = registry.number(note.retained)
            contradictions.append(
                f"Les sources {cited} divergent ; source retenue : [{kept}] ({note.reason})."
            )
        open_questions += analysis.findings.open_questions
    sources = registry.sources()
    data = WriterInput(
        request_title=request_title,
        request=request,
        questions={a.subtask_id: a.question for a in analyses},
        findings=numbered,
        contradictions=contradictions,
        open_questions=list(dict.fromkeys(open_questions)),
        missing_axes=[a.question for a in analyses if a.status == "failed"],
        sources=sources,
        mandatory_mentions=list(mandatory_mentions),
        min_words=min_words,
        max_words=max_words,
        max_sentence_words=max_sentence_words,
    )
    return data, sources


def write_draft(client: Asker, data: WriterInput) -> tuple[str, list[Alert]]:
    """The writer's Markdown (title stripped, citation lists normalised) and orphan alerts."""
    result = client.ask(WRITER, data)
    draft = normalize_citations(strip_title(result.output.markdown))
    alerts = []
    orphans = invalid_citations(draft, data.sources)
    if orphans:
        alerts.append(
            Alert(
                code="report.orphan_citation",
                severity="warning",
                stage="report",
                message=f"le rédacteur cite des numéros sans source {orphans} : consigne donnée au réviseur",
            )
        )
    return draft, alerts


class WrittenDraft(BaseModel):
    draft: str
    sources: list[SourceRef]
    writer_input: WriterInput
    alerts: list[Alert] = Field(default_factory=list)


def write_sourced_draft(
    client: Asker, analyses: Sequence[Analysis], request: Request, grid: Grid, db_path: Path
) -> WrittenDraft:
    """Number the cited sources (code, in order of first citation across branches), then have the
    writer turn the numbered findings into the draft: the model sees numbers, never document ids."""
    cited = [i for a in analyses for f in a.findings.findings for i in f.doc_ids]
    cited += [i for a in analyses for c in a.findings.contradictions for i in (*c.doc_ids, c.retained)]
    metadata = source_metadata(db_path, cited)
    data, sources = number_findings(
        analyses,
        metadata,
        request_title=request.title,
        request=request.text,
        mandatory_mentions=grid.mandatory_mentions,
        min_words=grid.min_words,
        max_words=grid.max_words,
        max_sentence_words=grid.max_sentence_words,
    )
    flags = {i: label for a in analyses for i, label in a.flags.items()}
    if flags:  # flagged documents kept by the plan are marked in the sources list
        sources = [s.model_copy(update={"flag": flags.get(s.id, s.flag)}) for s in sources]
        data = data.model_copy(update={"sources": sources})
    draft, alerts = write_draft(client, data)
    return WrittenDraft(draft=draft, sources=sources, writer_input=data, alerts=alerts)


def strip_title(markdown: str) -> str:
    """Drop a leading ``# title`` line the model may have added (the code writes the title)."""
    lines = markdown.strip().splitlines()
    if lines and re.match(r"^#\s+\S", lines[0]):
        lines = lines[1:]
    return "\n".join(lines).strip()


def ensure_missing_axes(body: str, missing_axes: Sequence[str]) -> str:
    """Name every failed axis under "Ce qui reste incertain" (added by code when the model did not)."""
    if not missing_axes:
        return body
    uncertain = split_sections(body).get(UNCERTAIN_SECTION, "")
    lines = [
        f"- Axe non couvert (analyse en échec) : {axis}" for axis in missing_axes if axis not in uncertain
    ]
    if not lines:
        return body
    addition = "\n".join(lines)
    if UNCERTAIN_SECTION not in section_order(body):
        return f"{body.rstrip()}\n\n## {UNCERTAIN_SECTION}\n\n{addition}\n"
    # Insert at the end of the section, before the next heading if any.
    out, inside, inserted = [], False, False
    for line in body.splitlines():
        is_heading = re.match(r"^##\s+", line) is not None and not line.startswith("###")
        if inside and is_heading and not inserted:
            out.extend([addition, ""])
            inserted = True
        if is_heading:
            inside = line[2:].strip().rstrip("#").strip() == UNCERTAIN_SECTION
        out.append(line)
    if not inserted:
        out.extend(["", addition])
    return "\n".join(out).strip() + "\n"


def assemble_report(title: str, body: str, sources: Sequence[SourceRef]) -> str:
    """``# title``, the model text, then the code-built ``## Sources``."""
    text = body.strip()
    sources_text = bibliography(sources) if sources else "Aucune source citée."
    return f"# {title.strip()}\n\n{text}\n\n## {SOURCES_HEADING}\n\n{sources_text}\n"


@dataclass(frozen=True)
class FinalReport:
    """The shipped report: orphans stripped, citations renumbered, Sources appended."""

    markdown: str  # the whole report.md
    body: str  # the model text as shipped (no title, no Sources)
    sources: list[SourceRef]  # renumbered, cited ones only
    removed_orphans: list[int]  # orphan numbers stripped by code (an alert is due when non-empty)


def finalize_report(
    title: str, body: str, sources: Sequence[SourceRef], missing_axes: Sequence[str] = ()
) -> FinalReport:
    """Zero tolerance for orphans: strip them, renumber by first appearance, append the bibliography."""
    body = strip_title(body)
    # A "## Sources" section written by the model is dropped: the code writes it.
    if SOURCES_HEADING in section_order(body):
        kept = [
            f"## {name}\n\n{text}" if name else text
            for name, text in split_sections(body).items()
            if name != SOURCES_HEADING and (name or text)
        ]
        body = "\n\n".join(kept)
    orphans = invalid_citations(body, sources)
    if orphans:
        body = strip_citations(body, orphans)
    body = ensure_missing_axes(body, missing_axes)
    body, kept_sources = renumber_citations(body, sources)
    return FinalReport(assemble_report(title, body, kept_sources), body, kept_sources, orphans)
