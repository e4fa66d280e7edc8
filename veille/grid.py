"""The quality grid (seed 000), as data loaded from TOML.

The same object writes the critic's instructions (criteria and their definitions) and the
arbiter's instructions for the reviser (thresholds, word range, forbidden words, mandatory
mentions). Mandatory mentions come from the grid file and from request.md, merged.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from veille.tomlconfig import load_toml_model

__all__ = ["DEFAULT_CRITERIA", "Grid", "GridError", "load_grid"]

# Default criterion names for a dossier; definitions live in veille/data/grid.toml.
DEFAULT_CRITERIA = ("clarity", "concreteness", "citations", "tone", "correctness")


class GridError(ValueError):
    """The grid file is missing or malformed; the message names the file and the field."""


class Grid(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    criteria: dict[str, str] = Field(min_length=1, description="criterion name -> French definition")
    threshold: int = Field(default=4, ge=1, le=5, description="minimum score for each criterion")
    mean_min: float = Field(default=4.8, ge=1, le=5, description="minimum mean score")
    min_words: int = Field(default=350, ge=0)
    max_words: int = Field(default=1000, ge=1)
    max_sentence_words: int = Field(default=25, ge=1)
    forbidden_words: tuple[str, ...] = ()
    mandatory_mentions: tuple[str, ...] = ()
    # The request's language (veille.language_checks; reasons in veille/data/grid.toml).
    max_quoted_share: float = Field(
        default=0.75, gt=0, le=1, description="foreign quotations' share of a section"
    )
    min_quote_frame_words: int = Field(default=3, ge=0, description="own words of a sentence quoting")

    @model_validator(mode="after")
    def _check_ranges(self) -> Grid:
        if self.min_words > self.max_words:
            raise ValueError(f"min_words ({self.min_words}) must not exceed max_words ({self.max_words})")
        empty = [name for name, definition in self.criteria.items() if not definition.strip()]
        if empty:
            raise ValueError(f"criteria without a definition: {empty}")
        return self

    def with_mentions(self, mentions: Iterable[str]) -> Grid:
        """A copy whose mandatory mentions also include ``mentions`` (de-duplicated, order kept)."""
        merged = tuple(dict.fromkeys([*self.mandatory_mentions, *(m for m in mentions if m.strip())]))
        return self.model_copy(update={"mandatory_mentions": merged})


def load_grid(path: Path, *, extra_mentions: Iterable[str] = ()) -> Grid:
    """Load a grid TOML file; ``extra_mentions`` (request.md's) are merged into mandatory mentions."""
    grid = load_toml_model(
        path, Grid, error=GridError, what="grid", expected="a TOML file with a [criteria] table"
    )
    return grid.with_mentions(extra_mentions)
