"""The research step (seed 004, ``--web``): one grounded call per sub-task, sources from chunks only.

The researcher answers in free text; what code keeps of it comes from the grounding metadata
(:class:`~veille.models.grounding.GroundedAnswer`):

- a **web finding** is a segment of the answer that a grounding support ties to at least one chunk
  with a usable URI; it keeps those chunk indices (``chunks``) and the ids of their pages;
- a **web source** is a chunk's page: ``{title, uri, domain, retrieved_at}``, its id derived from
  the URI, so the same page (within an answer, or found by two sub-tasks) is one source;
- what the answer says without a supporting chunk is dropped with an alert (``web.unsupported_claim``),
  chunks without a URI are ignored (``web.chunk_without_uri``), and an answer without metadata
  gives no finding (``web.no_grounding``);
- segments and page titles go through the injection screen (:func:`veille.steps.screen.detect_injection`):
  a suspicious segment is dropped, a suspicious title replaced by the domain and flagged.

URIs are text: nothing here (or anywhere in veille) requests them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from veille.alerts import Alert, Severity, alert, grouped_alert
from veille.models.attempts import BlockedPromptError, GroundingBudgetError
from veille.models.base import ModelError
from veille.models.grounding import GroundedAnswer, WebChunk
from veille.roles.base import Asker
from veille.roles.planner import SubTask
from veille.roles.researcher import RESEARCHER, ResearcherInput
from veille.steps.screen import FLAG_LABEL, detect_injection
from veille.textstats import sentences

__all__ = [
    "WebFinding",
    "WebResearch",
    "WebSource",
    "research_failed",
    "research_plan",
    "research_subtask",
    "web_findings",
    "web_source_id",
    "web_sources",
]

_MAX_TITLE = 200
_MAX_URI = 2048
_DOMAIN_RE = re.compile(r"^(?=.{3,253}$)([a-z0-9-]+\.)+[a-z]{2,}$", re.IGNORECASE)


class WebSource(BaseModel):
    """A web page from a grounding chunk (what sources.json and the bibliography show)."""

    id: str  # "web-" + 12 hex of the URI's SHA-256: one id per URI, stable across sub-tasks and runs
    uri: str
    title: str
    domain: str
    retrieved_at: str
    flag: str | None = None  # the screen flagged its title

    # What veille.citations.SourceRegistry reads of any source.
    @property
    def date(self) -> str:
        return self.retrieved_at[:10]

    @property
    def source_type(self) -> str:
        return "web"

    @property
    def url(self) -> str:
        return self.uri

    @property
    def kind(self) -> str:
        return "web"


class WebFinding(BaseModel):
    statement: str  # the answer's segment, as the model wrote it
    source_ids: list[str]  # ids of the pages of its chunks, de-duplicated, in chunk order
    chunks: list[int]  # indices into the answer's grounding_chunks that support it


class WebResearch(BaseModel):
    """One sub-task's web research (findings.json ``web`` entry)."""

    subtask_id: str
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None
    queries: list[str] = Field(default_factory=list)
    findings: list[WebFinding] = Field(default_factory=list)
    sources: list[WebSource] = Field(default_factory=list)
    alerts: list[Alert] = Field(default_factory=list)


def web_source_id(uri: str) -> str:
    return "web-" + hashlib.sha256(uri.encode("utf-8")).hexdigest()[:12]


def _alert(code: str, severity: Severity, message: str, subject: str) -> Alert:
    return alert("research", code, message, severity=severity, subject=subject)


def _usable_uri(uri: str | None) -> str | None:
    """An http(s) URI that can be written between ``<`` ``>`` in Markdown; anything else is no URI."""
    uri = (uri or "").strip()
    if not uri or len(uri) > _MAX_URI or re.search(r"[\s<>\"`]", uri):
        return None
    parts = urlsplit(uri)
    return uri if parts.scheme in ("http", "https") and parts.netloc else None


def _one_line(text: str | None) -> str:
    return " ".join((text or "").replace("<", " ").replace(">", " ").split())[:_MAX_TITLE]


def _source(chunk: WebChunk, uri: str, retrieved_at: str) -> WebSource:
    title = _one_line(chunk.title)
    # The Gemini Developer API sends no domain; its titles are usually the domain itself.
    domain = _one_line(chunk.domain) or (title if _DOMAIN_RE.match(title) else "")
    domain = domain or (urlsplit(uri).hostname or "")
    source = WebSource(id=web_source_id(uri), uri=uri, title=title or domain, domain=domain,
                       retrieved_at=retrieved_at)  # fmt: skip
    if title and detect_injection(title, own_id=source.id):
        source.title, source.flag = domain, FLAG_LABEL  # the page's own words are not shown
    return source


def web_sources(answer: GroundedAnswer) -> tuple[dict[int, WebSource], int]:
    """Chunk index -> its page, for chunks with a usable URI; and how many chunks had none."""
    pages: dict[int, WebSource] = {}
    missing = 0
    for chunk in answer.chunks:
        uri = _usable_uri(chunk.uri)
        if uri is None:
            missing += 1
        else:
            pages[chunk.index] = _source(chunk, uri, answer.retrieved_at)
    return pages, missing


def _covered(sentence: str, kept: Sequence[str]) -> bool:
    flat = " ".join(sentence.split())
    return any(k in flat or flat in k for k in kept)


def web_findings(answer: GroundedAnswer, subtask_id: str) -> WebResearch:
    """The findings and sources code keeps of a grounded answer, and one alert per kind of loss."""
    pages, no_uri = web_sources(answer)
    merged: dict[str, list[int]] = {}  # segment -> chunk indices, order-preserving
    for support in answer.supports:
        text = " ".join(support.text.split())
        merged.setdefault(text, []).extend(support.chunk_indices)
    findings: list[WebFinding] = []
    unsupported: list[str] = []
    suspicious: list[str] = []
    for text, indices in merged.items():
        chunks = [i for i in dict.fromkeys(indices) if i in pages]
        if not chunks:
            unsupported.append(text)
        elif detect_injection(text, own_id=subtask_id):
            suspicious.append(text)
        else:
            ids = list(dict.fromkeys(pages[i].id for i in chunks))
            findings.append(WebFinding(statement=text, source_ids=ids, chunks=chunks))
    kept = [f.statement for f in findings] + suspicious
    unsupported += [s for s in sentences(answer.text) if not _covered(s, kept + unsupported)]
    used = dict.fromkeys(i for f in findings for i in f.source_ids)
    by_id = {p.id: p for p in pages.values()}
    research = WebResearch(subtask_id=subtask_id, queries=list(answer.queries), findings=findings,
                           sources=[by_id[i] for i in used])  # fmt: skip
    research.alerts = _loss_alerts(subtask_id, answer, no_uri, unsupported, suspicious, research.sources)
    return research


def _loss_alerts(
    subtask_id: str,
    answer: GroundedAnswer,
    no_uri: int,
    unsupported: Sequence[str],
    suspicious: Sequence[str],
    sources: Sequence[WebSource],
) -> list[Alert]:
    alerts = []
    if not answer.chunks:  # every claim is unsupported: one alert says so
        alerts.append(_alert("web.no_grounding", "warning",
                             f"{subtask_id} : réponse web sans source d'ancrage (aucun grounding_chunk) : "
                             f"{len(unsupported)} affirmation(s) retirée(s), aucun constat web retenu",
                             subtask_id))  # fmt: skip
        unsupported = []
    if no_uri:
        alerts.append(_alert("web.chunk_without_uri", "info",
                             f"{subtask_id} : {no_uri} source(s) d'ancrage sans URI exploitable ignorée(s)",
                             subtask_id))  # fmt: skip
    if unsupported:
        first = unsupported[0][:120]
        alerts.append(_alert("web.unsupported_claim", "warning",
                             f"{subtask_id} : {len(unsupported)} affirmation(s) web sans source d'ancrage "
                             f"retirée(s), dont « {first} »", subtask_id))  # fmt: skip
    if suspicious:
        alerts.append(_alert("web.injection_suspected", "warning",
                             f"{subtask_id} : {len(suspicious)} passage(s) web ressemblant à une consigne "
                             f"retiré(s), dont « {suspicious[0][:120]} »", subtask_id))  # fmt: skip
    flagged = [s.domain for s in sources if s.flag]
    if flagged:
        alerts.append(_alert("web.injection_suspected", "warning",
                             f"{subtask_id} : titre(s) de page ressemblant à une consigne remplacé(s) par "
                             f"le domaine : {', '.join(flagged)}", subtask_id))  # fmt: skip
    return alerts


def research_subtask(client: Asker, sub_task: SubTask, *, request_title: str, date: str) -> WebResearch:
    """One grounded call for ``sub_task``; a failure is an alert, never a failed branch or run."""
    data = ResearcherInput(subtask_id=sub_task.id, question=sub_task.question,
                           request_title=request_title, date=date)  # fmt: skip
    try:
        result = client.ask(RESEARCHER, data, subtask_id=sub_task.id)
    except BlockedPromptError as exc:
        return _failed(
            sub_task.id, exc, "web.blocked", f"recherche web bloquée par le fournisseur ({exc.reason})"
        )
    except GroundingBudgetError as exc:
        return _failed(
            sub_task.id, exc, "web.budget_exhausted", f"budget de recherches web épuisé ({exc.budget})"
        )
    except ModelError as exc:
        return research_failed(sub_task.id, exc)
    return web_findings(result.output, sub_task.id)


def research_failed(subtask_id: str, exc: BaseException) -> WebResearch:
    """The record of a research that failed (rate limit after retries, server error…)."""
    return _failed(subtask_id, exc, "web.failed", f"recherche web en échec ({type(exc).__name__})")


def _failed(subtask_id: str, exc: BaseException, code: str, what: str) -> WebResearch:
    message = f"{subtask_id} : {what} ; l'axe garde ses seuls documents du corpus"
    return WebResearch(subtask_id=subtask_id, status="failed", error=f"{type(exc).__name__}: {exc}"[:500],
                       alerts=[_alert(code, "warning", message, subtask_id)])  # fmt: skip


def research_plan(
    sub_tasks: Sequence[SubTask], *, web: bool, searches: bool, budget: int
) -> tuple[list[SubTask], list[Alert]]:
    """Which sub-tasks get their grounded call: none without ``web``; none when the researcher's
    provider cannot search the web (``searches``: the offline engine; a warning: the run goes on
    from the corpus alone); else the first ``budget`` in plan order, the rest named."""
    if not web:
        return [], []
    if not searches:
        return [], [_alert("web.offline", "warning",
                           "--web demandé mais le fournisseur du chercheur (moteur hors ligne ou serveur "
                           "compatible OpenAI) n'a pas de recherche web : dossier rédigé à partir du seul "
                           "corpus", "web")]  # fmt: skip
    chosen, left = list(sub_tasks[:budget]), [st.id for st in sub_tasks[budget:]]
    alerts = []
    if left:
        alerts.append(grouped_alert("web.budget_exhausted", stage="research", subjects=left,
                                    head=f"budget de {budget} recherche(s) web par exécution atteint ; "
                                    "sous-tâches sans recherche web"))  # fmt: skip
    return chosen, alerts
