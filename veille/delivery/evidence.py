"""The evidence under a dossier item in report.html and the e-mail (issue 36, item 2).

Each key point and ledger entry of the reviewed structure carries the passages code located in its
cited documents (:class:`veille.dossier.Evidence`, veille.steps.verify). report.md keeps them out of
the prose; the page shows them on demand under the item (``<details>``), with the document's title,
date and number in the bibliography. An item of report.md is matched to its structure by its words
(letters and digits, citation markers and Markdown escapes aside): renumbering and escaping change
neither.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from veille.dossier import SUPERSEDED_MARK, Dossier, render_ledger_entry
from veille.roles.writer import SourceRef

__all__ = ["UNKNOWN_DATE", "evidence_views", "item_key"]

UNKNOWN_DATE = "date inconnue"
_CITE_RE = re.compile(r"\[\d{1,4}\]")


def item_key(text: str) -> str:
    """What identifies an item whatever its citations' numbers and Markdown escapes."""
    bare = _CITE_RE.sub("", text).replace(SUPERSEDED_MARK, "")
    return "".join(c for c in bare.casefold() if c.isalnum())


def evidence_views(dossier: Dossier | None, sources: Sequence[SourceRef]) -> dict[str, list[dict[str, Any]]]:
    """Item key -> what is shown under it: passage, title, date and the source's number (None
    when the bibliography does not list the document). Strings stay strings: the template escapes."""
    if dossier is None:
        return {}
    numbers = {s.id: s.number for s in sources if s.kind == "corpus"}
    out: dict[str, list[dict[str, Any]]] = {}
    items: list[tuple[str, Any]] = [(p.text, p.evidence) for s in dossier.sections for p in s.points]
    items += [(render_ledger_entry(e), e.evidence) for e in dossier.contradictions]
    for text, evidence in items:
        if evidence:
            out[item_key(text)] = [
                {
                    "passage": e.passage,
                    "title": e.title,
                    "date": e.date or UNKNOWN_DATE,
                    "number": numbers.get(e.doc_id),
                }
                for e in evidence
            ]
    return out
