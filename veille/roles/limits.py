"""Ceilings on what a model may answer: the ``maxLength`` of every string and the ``maxItems`` of
every list of every role's response schema (issue 23, item 4).

They are in the schema the model is sent (veille.models.wire) and the per-input output models
validate them on arrival, so an answer past one is re-asked with the error, then handled as any
unusable answer (plan built by code, dossier rendered by code). They are ceilings against garbage —
a 400,000-character "finding", 200 findings — set well above what a good answer writes; the
tighter bounds a reader sees are code's, from Settings (``max_findings_per_branch``,
``max_item_words``, ``max_points_per_axis``, ``report_words_factor``), which drop whole items.

Characters, not words: JSON Schema bounds a string's length only. A French word with its space
averages ~6 characters, so :data:`TEXT_CHARS` is ~330 words, beyond the default 120-word item bound.
"""

from __future__ import annotations

__all__ = [
    "FIGURE_CHARS",
    "ITEMS",
    "REASON_CHARS",
    "TEXT_CHARS",
    "TITLE_CHARS",
]

TEXT_CHARS = 2_000  # a finding, a key point, a sentence of the dossier, a justification
REASON_CHARS = 1_000  # why a contradiction is settled, a critic's remark, an open question
TITLE_CHARS = 1_000  # a sub-task's question, a ledger entry's subject
FIGURE_CHARS = 200  # one figure quoted verbatim with its unit
ITEMS = 30  # any other list a model writes: figures, open questions, contradictions, remarks, citations
