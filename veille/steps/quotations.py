"""Document words in another language, marked as quotations in the dossier (issue 23, item 5).

A model (the writer quoting a document, an analyst copying its sentence) or code (the dossier
rendered from the findings) may show a document's sentence verbatim; in another language than the
request's, it is shown as what it is, a quotation marked with its language, « … » (en) — as the
offline writer writes it — never as a sentence of the dossier (French, code's own language, is
never marked: :func:`veille.language.mark_quotations`). Applied by
:func:`veille.steps.write.sanitize_dossier`, which every backend's structure goes through.
"""

from __future__ import annotations

from typing import Any

from veille.dossier import Dossier
from veille.language import mark_quotations

__all__ = ["mark_dossier_quotations"]


def mark_dossier_quotations(dossier: Dossier, language: str) -> Dossier:
    """``dossier`` with each sentence in neither ``language`` (the request's) nor its own language
    marked as a quotation: every text item, the ledger's subjects and reasons included."""
    copy = dossier.model_copy(deep=True)
    items: list[Any] = [*copy.synthesis, *copy.uncertainties, *(copy.recommendation or [])]
    items += [p for s in copy.sections for p in s.points]
    texts = [i.text for i in items] + [e.subject for e in copy.contradictions]
    texts += [e.reason for e in copy.contradictions]
    marked = iter(mark_quotations(texts, language))
    for item in items:
        item.text = next(marked)
    for entry in copy.contradictions:
        entry.subject = next(marked)
    for entry in copy.contradictions:
        entry.reason = next(marked)
    return copy
