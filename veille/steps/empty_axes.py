"""No axis left « Aucun constat sourcé » while its planned documents state something on it (issue
37, item 5): a branch whose analyst kept no finding, though it read documents, gets their
sentences that share the axis's words and state a figure, quoted as they are and cited to their
document. Code, for every backend; a document the screen flagged is never quoted. What each
sentence says is its source's; the writer and the sanitiser treat it as any finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from veille.alerts import Alert, alert
from veille.corpus.request_words import fold, weight
from veille.numbers import read_numbers
from veille.offline import lexicon
from veille.roles.analyst import Finding
from veille.steps.analyse import Analysis
from veille.store.readers import fetch_documents
from veille.textstats import sentences

__all__ = ["fill_empty_branches", "with_passages"]


def _keys(text: str) -> set[str]:
    size = int(weight("key_chars"))
    stop = lexicon.words("stop")
    return {
        w[:size] for w in fold(text).replace("'", " ").split() if len(w) > 2 and w not in stop and w.isalpha()
    }


def _empty(analysis: Analysis) -> bool:
    return analysis.status == "ok" and not analysis.findings.findings and bool(analysis.doc_ids)


def _passages(analysis: Analysis, texts: Mapping[str, str]) -> list[Finding]:
    asked = _keys(analysis.question)
    shared, most = weight("passage_shared_words"), int(weight("passages_per_document"))
    out: list[Finding] = []
    for doc_id in analysis.doc_ids:
        if doc_id in analysis.flags:
            continue  # a flagged document may be written to steer a model: never quoted by code
        found = [
            s
            for s in sentences(texts.get(doc_id, ""))
            if len(asked & _keys(s)) >= shared and any(r.role == "figure" for r in read_numbers(s))
        ]
        out += [Finding(statement=s, doc_ids=[doc_id]) for s in found[:most]]
    return out


def fill_empty_branches(analyses: Sequence[Analysis], database: Path) -> tuple[list[Analysis], list[Alert]]:
    """``analyses`` with each empty branch given its documents' passages on its axis (read from the
    store), and one alert per branch so filled."""
    empty = [i for a in analyses if _empty(a) for i in a.doc_ids]
    if not empty:
        return list(analyses), []
    return with_passages(analyses, {d.id: d.body for d in fetch_documents(database, empty)})


def with_passages(
    analyses: Sequence[Analysis], texts: Mapping[str, str]
) -> tuple[list[Analysis], list[Alert]]:
    """:func:`fill_empty_branches` over the documents' ``texts`` (id -> body)."""
    out, alerts = [], []
    for analysis in analyses:
        passages = _passages(analysis, texts) if _empty(analysis) else []
        if not passages:
            out.append(analysis)
            continue
        findings = analysis.findings.model_copy(update={"findings": passages})
        out.append(analysis.model_copy(update={"findings": findings}))
        alerts.append(
            alert(
                "write",
                "write.axis_passages",
                f"{analysis.subtask_id} : l'analyste n'a retenu aucun constat ; {len(passages)} phrase(s) "
                "chiffrée(s) de ses documents sur cet axe reprise(s) telles quelles",
                severity="info",
                subject=analysis.subtask_id,
            )
        )
    return out, alerts
