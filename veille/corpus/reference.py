"""The corpus reference: ``<corpus>/reference/`` (``dossier.md`` + ``facts.yaml``), read by the graders."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from veille.corpus.errors import CorpusError, quote
from veille.corpus.frontmatter import _load_yaml, _read_text, _yaml_type

__all__ = [
    "Contradiction",
    "Facts",
    "Reference",
    "load_reference",
    "reference_if_valid",
    "unknown_reference_ids",
]


class Contradiction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    docs: list[str] = Field(min_length=2)
    expected: str
    keywords: list[str] = Field(default_factory=list)


class Facts(BaseModel):
    # extra=forbid: a typo such as 'exlude' must not silently disable a check.
    model_config = ConfigDict(extra="forbid")

    figures: list[str] = Field(default_factory=list)
    groups: list[list[str]] = Field(default_factory=list)
    keep: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(default_factory=list)


class Reference(BaseModel):
    dossier: str
    facts: Facts


def load_reference(corpus_dir: Path) -> Reference | None:
    """``<corpus>/reference/`` (dossier.md + facts.yaml), or None when the folder does not exist."""
    folder = corpus_dir / "reference"
    if not folder.is_dir():
        return None
    dossier_path = folder / "dossier.md"
    facts_path = folder / "facts.yaml"
    for required in (dossier_path, facts_path):
        if not required.is_file():
            raise CorpusError(
                required,
                None,
                "un dossier reference/ contenant dossier.md et facts.yaml",
                "fichier introuvable",
            )
    _, dossier = _read_text(dossier_path, max_bytes=None)
    if not dossier.strip():
        raise CorpusError(dossier_path, None, "le dossier de référence en Markdown", "fichier vide")
    _, facts_text = _read_text(facts_path, max_bytes=None)
    data = _load_yaml(
        facts_text, facts_path, line_offset=0, what="figures/groups/keep/exclude/contradictions"
    )
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CorpusError(
            facts_path,
            None,
            "un dictionnaire YAML avec figures, groups, keep, exclude, contradictions",
            f"reçu : {_yaml_type(data)} YAML",
        )
    try:
        facts = Facts.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise CorpusError(
            facts_path,
            field,
            _facts_expectation(err["type"]),
            f"{_facts_problem(err['type'], err['msg'])} (reçu : {quote(err.get('input'))})",
        ) from None
    return Reference(dossier=dossier.strip(), facts=facts)


def reference_if_valid(corpus_dir: Path) -> Reference | None:
    """The reference for grading, None when absent or invalid: ingestion has already turned an invalid
    one into an ``ingest.invalid_reference`` alert (or, in strict mode, stopped the run)."""
    try:
        return load_reference(corpus_dir)
    except CorpusError:
        return None


def _facts_problem(error_type: str, message: str) -> str:
    """The problem in French; pydantic's own (English) message kept in parentheses for the detail."""
    if error_type == "extra_forbidden":
        return "champ inconnu"
    if error_type == "too_short":
        return "trop peu d'éléments"
    return f"valeur invalide ({message})"


def _facts_expectation(error_type: str) -> str:
    if error_type == "extra_forbidden":
        return "seulement figures, groups, keep, exclude, contradictions (et id, docs, expected, keywords par contradiction)"
    if error_type == "too_short":
        return "au moins deux identifiants de documents par contradiction"
    return "la forme de facts.yaml décrite dans docs/corpus-format.md (listes de chaînes, identifiants de documents)"


def unknown_reference_ids(reference: Reference, known_ids: Collection[str]) -> list[str]:
    """Document ids named in facts.yaml (groups, keep, exclude, contradictions) that are not in ``known_ids``."""
    facts = reference.facts
    named: list[str] = [i for group in facts.groups for i in group]
    named += facts.keep + facts.exclude + [i for c in facts.contradictions for i in c.docs]
    known = set(known_ids)
    return sorted({i for i in named if i not in known})
