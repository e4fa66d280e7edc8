"""Writer (seed 004): turns numbered findings into the dossier's structure; cites source numbers only.

Its output schema is built per request (:func:`veille.dossier.dossier_schema`): citations are the
source numbers of this input, section ids its axes; code renders the Markdown.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from veille.dossier import SYNTHESIS_MAX, SYNTHESIS_MIN, Dossier, dossier_schema
from veille.language import request_language
from veille.roles.base import Role
from veille.roles.delimit import UNTRUSTED_NOTICE, data_block
from veille.roles.limits import DOSSIER_ITEMS, Bounds

__all__ = [
    "INSTRUCTIONS",
    "WRITER",
    "NumberedContradiction",
    "NumberedFinding",
    "SourceRef",
    "WriterInput",
    "build_prompt",
    "output_schema",
    "touched_sources",
]


class SourceRef(BaseModel):
    """A numbered source: a corpus document, or a web page from the grounding chunks (``--web``)."""

    number: int
    id: str
    title: str
    date: str  # web: the date the search returned the page
    source_type: str
    url: str | None = None
    flag: str | None = None  # e.g. "injection suspectée": the screen flagged it, the plan kept it
    kind: Literal["corpus", "web"] = "corpus"
    domain: str | None = None  # web only: the page's domain
    retrieved_at: str | None = None  # web only: when the grounded answer came back (UTC, ISO 8601)
    # corpus only: where the date came from (veille.docdates.DATE_ORIGINS; date « date inconnue » if unknown)
    date_origin: str | None = None


class NumberedFinding(BaseModel):
    subtask_id: str
    statement: str
    sources: list[int]  # source numbers, never document ids


class NumberedContradiction(BaseModel):
    """An analyst's contradiction note with source numbers: which side is retained, and why."""

    subtask_id: str
    retained: list[int]
    rejected: list[int]
    reason: str


class WriterInput(BaseModel):
    request_title: str
    request: str
    questions: dict[str, str]  # sub-task id -> question
    axes: dict[str, str] = Field(default_factory=dict)  # sub-task id -> section title (ok branches)
    findings: list[NumberedFinding]
    contradictions: list[NumberedContradiction] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    missing_axes: list[str] = Field(default_factory=list)  # questions of failed branches
    sources: list[SourceRef]
    mandatory_mentions: list[str] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)  # what the request compares (its terms)
    # What the request asks for (veille.corpus.request_reading.read_kind): only a choice gets a
    # recommendation; an inventory one key point per item found; an evolution what changed when.
    kind: Literal["choice", "inventory", "evolution", "survey"] = "choice"
    min_words: int = 0
    max_words: int = 10_000
    max_sentence_words: int = 25
    bounds: Bounds = Field(default_factory=Bounds)  # code's (Settings), stated in the rules
    # Incremental nights (veille.steps.sections): axes whose section code keeps from a validated night
    # (id -> title; not in ``axes``), and that night's conclusions in tonight's numbers, to update.
    kept_axes: dict[str, str] = Field(default_factory=dict)
    previous: Dossier | None = None
    kept_words: int = 0  # the kept sections' words: the length rule is the whole dossier's


# --- prompt (seed 004) --------------------------------------------------------------------------

INSTRUCTIONS = f"""Tu es le rédacteur d'un dossier de veille technique. Tu réponds en français, sur un ton neutre et factuel.
Tu reçois la demande et les constats des analystes ; chaque constat porte les numéros de ses sources.
{UNTRUSTED_NOTICE}
Tu remplis une structure ; le code en écrit le Markdown, les titres et la liste des sources :
- synthesis : {SYNTHESIS_MIN} à {SYNTHESIS_MAX} phrases courtes, chacune avec ses numéros de sources ;
- sections : une par axe (axis = identifiant de la sous-tâche), chaque point clé = un fait avec au moins un numéro de source ;
- contradictions : pour chaque divergence entre sources, le sujet, les sources retenues, les sources écartées et la raison (date, fiabilité) ;
  un chiffre des sources écartées n'est pas un point clé, sauf marqué superseded ;
- uncertainties : questions ouvertes et axes non couverts ;
- recommendation (seulement si la structure demandée la contient) : ce que les chiffres retenus impliquent pour la demande, avec leurs sources.
N'utilise QUE les faits des constats et ne cite QUE les numéros fournis, dans les listes citations (jamais dans le texte).
Recopie les chiffres avec leur unité. N'écris jamais d'identifiant de document, seulement des numéros."""


# What the request asks for, said to the writer (the schema has no recommendation but for a choice).
_KIND_RULES = {
    "choice": "",
    "inventory": " La demande est un inventaire : un point clé par élément trouvé dans les constats, sans recommandation.",
    "evolution": " La demande porte sur une évolution : dis ce qui a changé et quand, sans recommandation.",
    "survey": " La demande ne demande pas de choix : pas de recommandation.",
}


def _cites(numbers: list[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def touched_sources(data: WriterInput) -> set[int]:
    """The source numbers the changed axes' findings and notes cite (an incremental night)."""
    out = {n for f in data.findings for n in f.sources}
    return out | {n for c in data.contradictions for n in (*c.retained, *c.rejected)}


def _kept_text(data: WriterInput) -> str:
    """Incremental night: the axes kept as they are, and the previous conclusions to update."""
    kept = "\n".join(f"- {title}" for title in data.kept_axes.values())
    text = (
        "Axes inchangés, déjà rédigés et validés (le code les reprend ; ne les réécris pas, "
        f"n'écris de sections que pour les axes des constats ci-dessus) :\n{kept}"
    )
    if data.kept_words:
        text += f"\nIls comptent {data.kept_words} mots : la longueur demandée vaut pour le dossier entier, eux compris."
    if data.previous is None:
        return text
    p = data.previous
    # Only what the writer has nowhere else (issue 40 item 3): a previous contradiction citing a
    # source of the changed axes is settled again from tonight's notes above, or dropped (a stale
    # one is worse than a missing one: veille.offline.writer_update); an uncertainty that is one
    # of tonight's open questions word for word is already above.
    touched = touched_sources(data)
    asked = {" ".join(q.split()) for q in [*data.open_questions, *data.missing_axes]}
    lines = [f"- synthèse : {c.text} {_cites(c.citations)}" for c in p.synthesis]
    lines += [f"- contradiction : {e.subject} ; retenue(s) : {_cites(e.retained)} ; écartée(s) : "
              f"{_cites(e.rejected)} — {e.reason}" for e in p.contradictions
              if not {*e.retained, *e.rejected} & touched]  # fmt: skip
    lines += [
        f"- incertitude : {c.text} {_cites(c.citations)}"
        for c in p.uncertainties
        if " ".join(c.text.split()) not in asked
    ]
    lines += [f"- recommandation : {c.text} {_cites(c.citations)}" for c in p.recommendation or []]
    previous = data_block("constats", "\n".join(lines) or "(aucune)")
    return (
        f"{text}\n\nConclusions de la nuit précédente (synthèse, contradictions, incertitudes, "
        f"recommandation), à reprendre et mettre à jour avec les constats ci-dessus :\n{previous}"
    )


def build_prompt(data: WriterInput) -> str:
    """Request, rules of the grid, numbered findings (as data), contradictions, gaps."""
    by_subtask: dict[str, list[str]] = {}
    for f in data.findings:
        cites = _cites(f.sources)
        by_subtask.setdefault(f.subtask_id, []).append(f"- {f.statement.strip()} {cites}")
    parts = []
    for st_id, question in data.questions.items():
        lines = by_subtask.get(st_id, [])
        if lines:
            parts.append(
                f"### {st_id} (axe « {data.axes.get(st_id, st_id)} ») — {question}\n" + "\n".join(lines)
            )
    findings = data_block("constats", "\n\n".join(parts) or "(aucun constat)")
    extra = []
    if data.contradictions:
        extra.append(
            "Contradictions relevées :\n"
            + "\n".join(
                f"- ({c.subtask_id}) retenue(s) : {_cites(c.retained)} ; écartée(s) : {_cites(c.rejected)} — {c.reason}"
                for c in data.contradictions
            )
        )
    if data.open_questions:
        extra.append("Questions ouvertes :\n" + "\n".join(f"- {q}" for q in data.open_questions))
    if data.missing_axes:
        extra.append(
            "Axes NON couverts (analyse en échec) — à nommer dans « Ce qui reste incertain » :\n"
            + "\n".join(f"- {a}" for a in data.missing_axes)
        )
    extra_text = data_block("constats", "\n\n".join(extra)) if extra else ""
    if data.kept_axes:
        extra_text += "\n\n" + _kept_text(data)
    numbers = ", ".join(str(s.number) for s in data.sources)
    mentions = ", ".join(f"« {m} »" for m in data.mandatory_mentions)
    rules = (
        f"Longueur : {data.min_words} à {data.max_words} mots. Phrases de {data.max_sentence_words} mots au plus."
        f" Au plus {data.bounds.max_points_per_axis} points clés par axe, de {data.bounds.max_item_words} mots au plus chacun."
        + (f" Mentions obligatoires : {mentions}." if mentions else "")
        + (
            (
                " Options comparées (la recommandation les départage) : "
                if data.kind == "choice"
                else " Options nommées : "
            )
            + ", ".join(f"« {o} »" for o in data.options)
            + "."
            if data.options
            else ""
        )
        + _KIND_RULES[data.kind]
        + f" Numéros de sources disponibles : {numbers or 'aucun'}."
    )
    return (
        f"Demande : {data.request_title}\n{data.request.strip()}\n\n{rules}\n\n"
        f"Constats des analystes :\n{findings}\n\n{extra_text}"
    ).strip()


def output_schema(data: WriterInput) -> type[BaseModel]:
    """Citations among this input's source numbers, sections among its axes."""
    return dossier_schema(
        (s.number for s in data.sources), data.axes or data.questions, data.kind == "choice"
    )


WRITER: Role[WriterInput, BaseModel] = Role(
    name="writer",
    input_type=WriterInput,
    instructions=INSTRUCTIONS,
    build_prompt=build_prompt,
    output_schema=output_schema,
    prose_language=lambda data: request_language(data.request_title, data.request),
    items=DOSSIER_ITEMS,
)
