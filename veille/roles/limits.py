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

from pydantic import BaseModel, ConfigDict, Field

from veille.itempolicy import ItemPolicy

__all__ = [
    "CRITIC_ITEMS",
    "DOSSIER_ITEMS",
    "FIGURE_CHARS",
    "FINDINGS_ITEMS",
    "ITEMS",
    "REASON_CHARS",
    "TEXT_CHARS",
    "TITLE_CHARS",
    "Bounds",
]

TEXT_CHARS = 2_000  # a finding, a key point, a sentence of the dossier, a justification
REASON_CHARS = 1_000  # why a contradiction is settled, a critic's remark, an open question
TITLE_CHARS = 1_000  # a sub-task's question, a ledger entry's subject
FIGURE_CHARS = 200  # one figure quoted verbatim with its unit
ITEMS = 30  # any other list a model writes: figures, open questions, contradictions, remarks, citations

# What an answer keeps when some of its items are invalid (issue 38, veille.models.salvage): each
# listed list holds independent items, dropped one by one (the deepest: a figure past its limit
# drops the figure, not its finding). An analyst answer is usable with one valid finding or an
# explicit empty list; a dossier with the sections the writer sent not all dropped, and the
# synthesis and recommendation its schema requires.
FINDINGS_ITEMS = ItemPolicy(
    droppable=("findings", "findings.figures", "contradictions", "open_questions"),
    required=("findings",),
)
DOSSIER_ITEMS = ItemPolicy(
    droppable=(
        "synthesis",
        "sections",
        "sections.points",
        "contradictions",
        "uncertainties",
        "recommendation",
    ),
    required=("sections",),
)
CRITIC_ITEMS = ItemPolicy(droppable=("remarks",))  # the scores are the answer: never dropped


class Bounds(BaseModel):
    """Code's bounds on what a model makes us write, from Settings (``max_findings_per_branch``,
    ``max_item_words``, ``max_points_per_axis``, ``report_words_factor``): stated to the model in its
    prompt (and the findings' count in its schema), enforced by code on arrival by dropping whole
    items with an alert (veille.steps.bounds), never by cutting a sentence."""

    model_config = ConfigDict(frozen=True)

    max_findings: int = Field(default=30, ge=1)  # findings kept per analyst answer, in its order
    max_item_words: int = Field(default=120, ge=1)  # words of a finding, key point or sentence
    max_points_per_axis: int = Field(default=12, ge=1)  # key points kept per axis of the dossier
    report_words_factor: float = Field(default=2.0, ge=1.0)  # report items' words ≤ factor × max_words

    def report_words(self, max_words: int) -> int:
        """Words the dossier's items may hold in all, for a grid of ``max_words``."""
        return int(self.report_words_factor * max_words)
