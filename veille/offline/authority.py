"""Authority ranking of source types (veille/data/authority.toml), for the offline analyst and planner."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from veille.offline import lexicon
from veille.offline.text import fold
from veille.tomlconfig import load_toml_model

__all__ = ["AuthorityError", "AuthorityRanking", "SourceType", "Supersedes", "load_authority"]

OrderKey = Literal["authority", "date", "id"]


class AuthorityError(ValueError):
    """The authority file is missing or malformed; the message names the file and the field."""


class SourceType(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rank: int = Field(ge=0, description="higher is more authoritative")
    label: str = Field(default="", description="French name with its article, e.g. 'la mesure interne'")
    aliases: tuple[str, ...] = ()


class Supersedes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    newer: str
    older: str


class AuthorityRanking(BaseModel):
    """Source-type ranks and tie rules. The default instance ranks every type equally (date decides)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    order: tuple[OrderKey, ...] = ("authority", "date")
    default_rank: int = Field(default_factory=lambda: int(lexicon.weight("plan_authority.default_rank")))
    framing_types: tuple[str, ...] = ()
    supersedes: tuple[Supersedes, ...] = ()
    types: dict[str, SourceType] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> AuthorityRanking:
        if not self.order or len(set(self.order)) != len(self.order):
            raise ValueError("order must list 'authority', 'date' and/or 'id' once each")
        return self

    def _canonical(self, source_type: str) -> str | None:
        key = fold(source_type).strip()
        spellings = {name: {fold(s) for s in (name, *spec.aliases)} for name, spec in self.types.items()}
        return next((name for name in sorted(spellings) if key in spellings[name]), None)

    def _by_word(self, source_type: str) -> str | None:
        """The type a source type names by one of its words when it has no exact match: the first
        of its words found in exactly one type's name or aliases (« banc-comparatif », « essai-de-charge »:
        ``benchmark-interne``); a word several types use (« note ») decides nothing."""
        owners: dict[str, set[str]] = {}
        for name, spec in self.types.items():
            for spelling in (name, *spec.aliases):
                for word in _type_words(spelling):
                    owners.setdefault(word, set()).add(name)
        found = (owners.get(word, set()) for word in _type_words(source_type))
        return next((min(names) for names in found if len(names) == 1), None)

    def _resolve(self, source_type: str) -> tuple[str | None, bool]:
        """(type name, exact): the configured type, matched by name or alias, else by one word."""
        name = self._canonical(source_type)
        return (name, True) if name else (self._by_word(source_type), False)

    def rank(self, source_type: str) -> int:
        name, _ = self._resolve(source_type)
        return self.types[name].rank if name else self.default_rank

    def label(self, source_type: str) -> str:
        name, exact = self._resolve(source_type)
        if name and exact and self.types[name].label:
            return self.types[name].label
        return f"la source de type {source_type}"

    def framing(self) -> frozenset[str]:
        """Folded framing types, aliases included."""
        names = [name for t in self.framing_types if (name := self._canonical(t))]
        aliases = [a for name in names for a in (name, *self.types[name].aliases)]
        return frozenset(fold(t) for t in [*self.framing_types, *aliases])

    def settles(self, newer_type: str, older_type: str) -> bool:
        """True when a ``supersedes`` rule says a newer ``newer_type`` settles an older ``older_type``."""
        newer, older = self._canonical(newer_type) or newer_type, self._canonical(older_type) or older_type
        return any(
            fold(newer) == fold(self._canonical(r.newer) or r.newer)
            and fold(older) == fold(self._canonical(r.older) or r.older)
            for r in self.supersedes
        )

    def sort_key(self, source_type: str, date: str, doc_id: str) -> tuple[object, ...]:
        """Sort key putting the document to retain first (use ``min``)."""
        value: dict[OrderKey, object] = {
            "authority": -self.rank(source_type),
            "date": tuple(-ord(c) for c in date),  # later ISO date first
            "id": doc_id,
        }
        return (*(value[key] for key in self.order), doc_id)


def _type_words(source_type: str) -> list[str]:
    """The words of a source type that can name it (« de », « d », « la » cannot)."""
    shortest = lexicon.weight("plan_authority.type_word_min_letters")
    return [w for w in re.findall(r"[a-z0-9]+", fold(source_type)) if len(w) >= shortest]


def load_authority(path: Path) -> AuthorityRanking:
    """Load the authority ranking; a clear :class:`AuthorityError` names the file and the field."""
    return load_toml_model(
        path,
        AuthorityRanking,
        error=AuthorityError,
        what="authority ranking",
        expected="a TOML file with [types.<source-type>] rank = N",
    )
