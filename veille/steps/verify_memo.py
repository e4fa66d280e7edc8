"""The verifier's result kept for the same inputs (issue 40 item 4).

:func:`veille.steps.verify.verify_dossier` reads every figure of every cited document (the heaviest
step of an unchanged night after the plan's settling: docs/benchmarks.md), on the writer's structure
and on each revision. It is a pure function of the structure, the context (the cited documents'
texts, the request's options and text), the stage and the code and data files behind it, so the
same structure verified against the same texts on a later night gets the kept result
(``<warehouse>/cache/verified.json``, the last results of a night: :func:`remembered_among`). The
folder travels with the context (``VerifyContext.memo``, None: nothing kept).
"""

from __future__ import annotations

import json
from typing import Any

from veille.alerts import Alert
from veille.dossier import Dossier
from veille.fingerprint import code_digest, text_digest
from veille.resources import data_dir
from veille.steps.unchanged import remembered_among
from veille.steps.verify import VerifyContext, verify_dossier

__all__ = ["remembered_verify", "verify_key"]

# The writer's structure and each revision of a night (max_rounds is small), with room for two.
_SLOTS = 16


def verify_key(dossier: Dossier, context: VerifyContext, stage: str) -> str:
    """The digest of everything :func:`verify_dossier` reads: equal keys, equal results."""
    bundled = tuple(sorted(p for p in data_dir().rglob("*") if p.is_file()))
    documents = [
        [n, d.id, d.title, d.date, text_digest(d.text)] for n, d in sorted(context.documents.items())
    ]
    listed = {
        "dossier": dossier.model_dump(mode="json"),
        "documents": documents,
        "options": context.options,
        "request": context.request,
        "stage": stage,
    }
    return text_digest(
        code_digest(("veille.steps.verify", __name__), bundled),
        json.dumps(listed, ensure_ascii=False, sort_keys=True),
    )


def remembered_verify(
    dossier: Dossier, context: VerifyContext, stage: str = "report"
) -> tuple[Dossier, list[Alert]]:
    """:func:`verify_dossier`'s result, kept in ``context.memo`` for the same inputs and code."""
    if context.memo is None:
        return verify_dossier(dossier, context, stage)

    def dump(result: tuple[Dossier, list[Alert]]) -> Any:
        return {
            "dossier": result[0].model_dump(mode="json"),
            "alerts": [a.model_dump(mode="json") for a in result[1]],
        }

    def load(value: Any) -> tuple[Dossier, list[Alert]]:
        return Dossier.model_validate(value["dossier"]), [Alert.model_validate(a) for a in value["alerts"]]

    return remembered_among(
        context.memo,
        "verified",
        verify_key(dossier, context, stage),
        lambda: verify_dossier(dossier, context, stage),
        dump,
        load,
        _SLOTS,
    )
