"""Writer (seed 004): turns numbered findings into the report; writes source numbers only."""

from __future__ import annotations

from pydantic import BaseModel, Field

from veille.roles.base import Role
from veille.roles.delimit import UNTRUSTED_NOTICE, data_block

__all__ = [
    "INSTRUCTIONS",
    "WRITER",
    "Draft",
    "NumberedFinding",
    "SourceRef",
    "WriterInput",
    "build_prompt",
]


class Draft(BaseModel):
    markdown: str = Field(
        description="Markdown with exactly '## Synthèse', '## Points clés', '## Ce qui reste incertain'; "
        "no Sources section (code adds it)"
    )


class SourceRef(BaseModel):
    number: int
    id: str
    title: str
    date: str
    source_type: str
    url: str | None = None
    flag: str | None = None  # e.g. "injection suspectée": the screen flagged it, the plan kept it


class NumberedFinding(BaseModel):
    subtask_id: str
    statement: str
    sources: list[int]  # source numbers, never document ids


class WriterInput(BaseModel):
    request_title: str
    request: str
    questions: dict[str, str]  # sub-task id -> question
    findings: list[NumberedFinding]
    contradictions: list[str] = Field(default_factory=list)  # already phrased with source numbers
    open_questions: list[str] = Field(default_factory=list)
    missing_axes: list[str] = Field(default_factory=list)  # questions of failed branches
    sources: list[SourceRef]
    mandatory_mentions: list[str] = Field(default_factory=list)
    min_words: int = 0
    max_words: int = 10_000
    max_sentence_words: int = 25


# --- prompt (seed 004) --------------------------------------------------------------------------

INSTRUCTIONS = f"""Tu es le rédacteur d'un dossier de veille technique. Tu réponds en français, sur un ton neutre et factuel.
Tu reçois la demande et les constats des analystes ; chaque constat porte les numéros de ses sources.
{UNTRUSTED_NOTICE}
Rédige un rapport Markdown avec exactement ces sections, dans cet ordre :
## Synthèse (3 phrases)
## Points clés (puces ; chaque puce finit par le ou les numéros de ses sources, ex. [1][3])
## Ce qui reste incertain (contradictions non tranchées, questions ouvertes, axes non couverts)
N'utilise QUE les faits des constats et ne cite QUE les numéros [n] fournis. Recopie les chiffres avec leur unité.
Quand deux sources se contredisent, dis laquelle tu retiens et pourquoi.
N'écris ni titre ni section Sources : ils sont ajoutés automatiquement. N'écris jamais d'identifiant de document, seulement des numéros."""


def build_prompt(data: WriterInput) -> str:
    """Request, rules of the grid, numbered findings (as data), contradictions, gaps."""
    by_subtask: dict[str, list[str]] = {}
    for f in data.findings:
        cites = "".join(f"[{n}]" for n in f.sources)
        by_subtask.setdefault(f.subtask_id, []).append(f"- {f.statement.strip()} {cites}")
    parts = []
    for st_id, question in data.questions.items():
        lines = by_subtask.get(st_id, [])
        if lines:
            parts.append(f"### {st_id} — {question}\n" + "\n".join(lines))
    findings = data_block("constats", "\n\n".join(parts) or "(aucun constat)")
    extra = []
    if data.contradictions:
        extra.append("Contradictions relevées :\n" + "\n".join(f"- {c}" for c in data.contradictions))
    if data.open_questions:
        extra.append("Questions ouvertes :\n" + "\n".join(f"- {q}" for q in data.open_questions))
    if data.missing_axes:
        extra.append(
            "Axes NON couverts (analyse en échec) — à nommer dans « Ce qui reste incertain » :\n"
            + "\n".join(f"- {a}" for a in data.missing_axes)
        )
    extra_text = data_block("constats", "\n\n".join(extra)) if extra else ""
    numbers = ", ".join(str(s.number) for s in data.sources)
    mentions = ", ".join(f"« {m} »" for m in data.mandatory_mentions)
    rules = (
        f"Longueur : {data.min_words} à {data.max_words} mots. Phrases de {data.max_sentence_words} mots au plus."
        + (f" Mentions obligatoires : {mentions}." if mentions else "")
        + f" Numéros de sources disponibles : {numbers or 'aucun'}."
    )
    return (
        f"Demande : {data.request_title}\n{data.request.strip()}\n\n{rules}\n\n"
        f"Constats des analystes :\n{findings}\n\n{extra_text}"
    ).strip()


WRITER: Role[WriterInput, Draft] = Role(
    name="writer",
    input_type=WriterInput,
    instructions=INSTRUCTIONS,
    build_prompt=build_prompt,
    output_schema=lambda _data: Draft,
)
