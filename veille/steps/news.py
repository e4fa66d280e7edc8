"""What changed since the previous dossier (issue 13): the document snapshot compared with the
previous completed run's, and the ``## Nouveautés`` section code writes from it.

Pure functions. The previous run comes from the warehouse (veille.warehouse.previous); the section
cites documents with the report's own numbering (the new and changed documents join the sources
when no analyst cited them) and lists the key points whose text is not in the previous report or
that cite a new or changed document.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from veille.alerts import Alert
from veille.dossier import (
    KEY_POINTS_SECTION,
    NEWS_SECTION,
    Dossier,
    KeyPoint,
    render_ledger_entry,
    rendered_key_points,
)
from veille.roles.writer import SourceRef
from veille.textstats import split_sections

__all__ = [
    "NEWS_SECTION",
    "Changes",
    "PreviousDossier",
    "compare_snapshots",
    "french_date",
    "key_point_key",
    "news_heading",
    "previous_dossier",
    "render_news",
]

_MONTHS = (
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
)
_SHOWN_POINTS = 10  # new key points listed in the section; the rest are counted


@dataclass(frozen=True)
class PreviousDossier:
    """The last completed run on the same corpus, as the warehouse recorded it."""

    run_id: str
    report_date: date
    documents: Mapping[str, str]  # doc id -> content hash
    key_points: frozenset[str] = frozenset()  # key_point_key() of each of its key points
    titles: Mapping[str, str] = field(default_factory=dict)  # doc id -> title, of the documents it cited
    plan: Mapping[str, Any] | None = None  # its plan.json (veille.steps.plan_reuse)


@dataclass(frozen=True)
class Changes:
    """Tonight's snapshot against the previous dossier's (None: the first dossier on this corpus)."""

    previous: PreviousDossier | None
    new: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    alerts: tuple[Alert, ...] = ()  # e.g. the previous run could not be read
    set_aside: tuple[str, ...] = ()  # new or changed documents tonight's plan excluded (see planned)

    @property
    def touched(self) -> tuple[str, ...]:
        """New and changed documents: what tonight's dossier has to read again."""
        return self.new + self.changed

    def planned(self, excluded: Collection[str]) -> Changes:
        """These changes once the plan is known: the new or changed documents it excluded are
        named in the news section, not cited (no analyst read them)."""
        out = set(excluded)
        return replace(self, set_aside=tuple(i for i in self.touched if i in out))

    @property
    def note(self) -> str:
        if self.previous is None:
            return "first dossier on this corpus"
        return (
            f"since {self.previous.run_id}: {len(self.new)} new, {len(self.changed)} changed, "
            f"{len(self.removed)} removed"
        )


def previous_dossier(
    run_id: str,
    report_date: date,
    documents: Mapping[str, str],
    markdown: str | None,
    sources: Sequence[tuple[int, str, str, str | None]] = (),
    plan: Mapping[str, Any] | None = None,
) -> PreviousDossier:
    """The previous run as the comparison needs it: its key points read back from its report."""
    points = rendered_key_points(split_sections(markdown or "").get(KEY_POINTS_SECTION, ""))
    return PreviousDossier(
        run_id=run_id,
        report_date=report_date,
        documents=dict(documents),
        key_points=frozenset(key_point_key(p.text) for p in points),
        titles={i: t for _, i, kind, t in sources if kind == "corpus" and t},
        plan=plan,
    )


def compare_snapshots(previous: PreviousDossier | None, current: Sequence[tuple[str, str]]) -> Changes:
    """New, changed (other content hash) and removed documents, each in id order."""
    if previous is None:
        return Changes(previous=None)
    now = dict(current)
    before = previous.documents
    return Changes(
        previous=previous,
        new=tuple(sorted(i for i in now if i not in before)),
        changed=tuple(sorted(i for i in now if i in before and before[i] != now[i])),
        removed=tuple(sorted(i for i in before if i not in now)),
    )


def french_date(day: date) -> str:
    """``2 décembre 2026`` (``1er`` for the first of the month)."""
    return f"{'1er' if day.day == 1 else day.day} {_MONTHS[day.month - 1]} {day.year}"


def news_heading(changes: Changes) -> str:
    if changes.previous is None:
        return NEWS_SECTION
    return f"{NEWS_SECTION} depuis le {french_date(changes.previous.report_date)}"


def key_point_key(text: str) -> str:
    """A key point's identity across reports: case, accents, punctuation and spacing folded."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(re.findall(r"\w+", folded))


def _source_line(kind: str, source: SourceRef) -> str:
    return f"- {kind} : « {source.title} » ({source.date}, {source.source_type}) [{source.number}]"


def _new_points(dossier: Dossier, changes: Changes, numbers: Mapping[str, int]) -> list[KeyPoint]:
    """Key points not in the previous report, or citing a new or changed document (superseded ones
    are left out: the ledger says what replaced them)."""
    assert changes.previous is not None
    touched = {numbers[i] for i in changes.touched if i in numbers}
    out = []
    for section in dossier.sections:
        for point in section.points:
            if not point.text.strip() or point.superseded:
                continue
            if key_point_key(point.text) not in changes.previous.key_points or touched & set(point.citations):
                out.append(point)
    return out


def render_news(
    changes: Changes,
    dossier: Dossier,
    sources: Sequence[SourceRef],
    metadata: Mapping[str, SourceRef],
) -> tuple[str, list[SourceRef]]:
    """The ``## Nouveautés…`` section and the sources extended with the new and changed documents
    no analyst cited (``metadata``: their SourceRef, any number; renumbered here after the others).
    Citations use the numbers of ``sources``; the report renumbers everything afterwards."""
    heading = f"## {news_heading(changes)}"
    previous = changes.previous
    if previous is None:
        return (
            f"{heading}\n\nPremier dossier de veille sur ce corpus : aucun dossier précédent à comparer.",
            list(sources),
        )
    extended = list(sources)
    by_id = {s.id: s for s in extended if s.kind == "corpus"}
    aside = {i: metadata[i] for i in changes.set_aside if i not in by_id and i in metadata}
    for doc_id in changes.touched:
        if doc_id not in by_id and doc_id not in aside and doc_id in metadata:
            ref = metadata[doc_id].model_copy(
                update={"number": max((s.number for s in extended), default=0) + 1}
            )
            extended.append(ref)
            by_id[doc_id] = ref
    counts = (
        f"Comparé au dossier du {french_date(previous.report_date)} (exécution {previous.run_id}) : "
        f"{len(changes.new)} document(s) nouveau(x), {len(changes.changed)} modifié(s), "
        f"{len(changes.removed)} retiré(s)."
    )
    parts = [heading, counts]
    lines = [_source_line("Nouveau", by_id[i]) for i in changes.new if i in by_id]
    lines += [_source_line("Modifié", by_id[i]) for i in changes.changed if i in by_id]
    lines += [f"- Retiré : « {previous.titles.get(i, i)} » ({i})" for i in changes.removed]
    # Out of the plan (another subject, or no room): named, not cited — the dossier did not read them.
    lines += [
        f"- {'Nouveau' if i in changes.new else 'Modifié'}, écarté par le plan : « {ref.title} » ({i})"
        for i, ref in aside.items()
    ]
    if lines:
        parts.append("### Documents nouveaux, modifiés ou retirés\n\n" + "\n".join(lines))
    points = _new_points(dossier, changes, {s.id: s.number for s in by_id.values()})
    numbers = {by_id[i].number for i in changes.touched if i in by_id}
    entries = [e for e in dossier.contradictions if numbers & {*e.retained, *e.rejected}]
    if entries:  # a new document that contradicts, or is contradicted by, what the dossier holds
        parts.append(
            "### Contradictions qui impliquent ces documents\n\n"
            + "\n".join(f"- {render_ledger_entry(e)}" for e in entries)
        )
    if points:
        shown = [
            f"- {p.text.strip()} " + "".join(f"[{n}]" for n in dict.fromkeys(p.citations))
            for p in points[:_SHOWN_POINTS]
        ]
        if len(points) > _SHOWN_POINTS:
            shown.append(
                f"- … et {len(points) - _SHOWN_POINTS} autre(s) point(s) clé(s) nouveau(x) ou modifié(s)."
            )
        parts.append("### Points clés nouveaux ou modifiés\n\n" + "\n".join(shown))
    else:
        parts.append(
            "### Points clés nouveaux ou modifiés\n\n"
            "Aucun point clé nouveau ou modifié par rapport au dossier précédent."
        )
    return "\n\n".join(parts), extended
