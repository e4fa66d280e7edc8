"""The alert a step raises for an answer kept in another language than its request's.

The seam re-asks once an answer whose prose is not in the request's language
(``veille.models.attempts``, ``ModelResult.foreign_language``); an answer still in another language
is **kept, with this warning**, rather than replaced by code: it is validated and cited like any
answer (its citations, figures and ledger are checked by the same code), and the text code would
render instead is plainer — the reader gets the content and is told its language is wrong. The
writer's code rendering stays for answers that are unusable, not for answers in the wrong language.
"""

from __future__ import annotations

from typing import Any

from veille.alerts import Alert, alert
from veille.models.base import ModelResult

__all__ = ["foreign_answer_alerts"]


def foreign_answer_alerts(
    stage: str, result: ModelResult[Any], who: str, subject: str | None = None
) -> list[Alert]:
    """One warning when ``result``'s prose stayed in another language after its re-ask (none else).
    ``who``: the role as the reader knows it (« rédacteur », « analyste de st-2 »)."""
    found = getattr(result, "foreign_language", "")  # an Asker's stand-in may carry only .output
    if not found:
        return []
    return [
        alert(
            stage,
            f"{stage}.foreign_language",
            f"réponse du {who} rédigée en « {found} » et non dans la langue de la "
            "demande, même après une nouvelle demande : gardée telle quelle, à relire",
            severity="warning",
            subject=subject,
        )
    ]
