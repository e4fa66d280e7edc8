"""What a document read in part records (:class:`PartRead`), apart from the reading itself.

The run summary shows « lu à N % » from it on every night, an unchanged night's included
(veille.run.nightskip); the reading module (veille.steps.reading) pulls in the offline engine's text
rules and markdown parsing, which such a night never needs. Pure: no I/O.
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["PartRead"]


class PartRead(BaseModel):
    """A document read in part: estimated tokens shown and in its whole text."""

    tokens_read: int
    tokens_total: int
    # Sections of the document sharing a word with the question and its axis's terms that were not
    # shown (issue 37 item 4: the analyst says which relevant passages it could not read).
    passages_unread: int = 0

    @property
    def percent(self) -> int:
        """Share shown, rounded down (a document read in part never shows 100 %); at least 1 when
        anything was read, 0 when no whole sentence fitted the document's share of the budget."""
        if self.tokens_total <= 0:
            return 100
        if self.tokens_read <= 0:
            return 0
        return max(1, min(99, self.tokens_read * 100 // self.tokens_total))
