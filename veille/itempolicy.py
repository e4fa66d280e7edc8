"""Which lists of a role's answer hold independent items (issue 38 item 3).

A neutral module, like :mod:`veille.journal`: the roles declare their policy (``Role.items``,
veille/roles/limits.py) and the model seam applies it (:mod:`veille.models.salvage`), while the
offline engine and the warehouse, which import the roles, never import the seam.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ItemPolicy"]


@dataclass(frozen=True)
class ItemPolicy:
    """Which lists of a role's answer hold independent items, droppable one by one.

    ``droppable``: dotted paths of lists (``"findings"``, ``"findings.figures"``, ``"sections.points"``);
    ``required``: top-level lists that drops must not empty (the answer is then unusable).
    """

    droppable: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
