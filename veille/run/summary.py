"""The short run summary printed by ``veille run`` / ``make run``, read back from the run folder."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veille.alertlines import alert_lines
from veille.alerts import Alert
from veille.gradestatus import GRADES_FILE, grade_counts, grade_status
from veille.journal import CallRecord, read_journal
from veille.plaintext import clean_text, inline_text
from veille.steps.partread import PartRead
from veille.store.ingest import IngestReport

__all__ = [
    "GRADING_ROLES",
    "INGEST_FILE",
    "ModelCalls",
    "RoleUsage",
    "format_summary",
    "ingest_alerts_recorded",
    "ingest_record",
    "load_ingest_report",
    "model_calls",
    "role_usage",
    "usage_note",
]

# Counts of the run's ingestion (not part of the warehouse contract: for the CLI summary only).
INGEST_FILE = "ingest.json"


@dataclass(frozen=True)
class RoleUsage:
    role: str
    calls: int  # logical calls (attempts of one call share a call_id)
    attempts: int  # journal records, cache hits included
    cache_hits: int
    input_tokens: int
    output_tokens: int  # thinking tokens included (billed as output)
    cost_usd: float | None  # None when any call could not be priced
    estimated: bool  # token counts estimated by us, not reported by a provider
    billed_attempts: int = 0  # attempts that reached the model and got an answer (not the cache)
    http_requests: int = 0  # HTTP requests sent: answered, refused (429, 5xx) or timed out alike

    def as_row(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "calls": self.calls,
            "attempts": self.attempts,
            "billed_attempts": self.billed_attempts,
            "http_requests": self.http_requests,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "estimated": self.estimated,
        }


def role_usage(calls_path: Path) -> list[RoleUsage]:
    """Tokens and cost per role from calls.jsonl, roles in pipeline order."""
    order = ["planner", "analyst", "analyst_update", "researcher", "writer", "critic", "reviser", "judge"]
    by_role: dict[str, list[Any]] = {}
    for record in read_journal(calls_path):
        by_role.setdefault(record.role, []).append(record)
    out = []
    for role in sorted(by_role, key=lambda r: (order.index(r) if r in order else len(order), r)):
        records = by_role[role]
        costs = [r.cost_usd for r in records]
        out.append(
            RoleUsage(
                role=role,
                calls=len({r.call_id for r in records}),
                attempts=len(records),
                cache_hits=sum(1 for r in records if r.cache_hit),
                input_tokens=sum(r.input_tokens for r in records),
                output_tokens=sum(r.output_tokens + r.reasoning_tokens for r in records),
                cost_usd=None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6),
                estimated=any(r.estimated for r in records),
                billed_attempts=sum(1 for r in records if _billed(r)),
                http_requests=sum(r.http_requests or 0 for r in records),
            )
        )
    return out


# Roles that grade the dossier once it is written (after report.html): counted apart from the dossier's.
GRADING_ROLES = frozenset({"judge"})


@dataclass(frozen=True)
class ModelCalls:
    """Logical calls (a call's attempts share its call_id) and their cost, as every view counts them."""

    calls: int
    cost_usd: float | None  # None when any attempt could not be priced


def model_calls(records: Iterable[CallRecord], *, grading: bool | None = None) -> ModelCalls:
    """The count report.html's header and the console's summary both print: ``grading`` None for every
    role, False for the dossier's roles only, True for the grading roles only."""
    mine = [r for r in records if grading is None or (r.role in GRADING_ROLES) == grading]
    costs = [r.cost_usd for r in mine]
    cost = None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6)
    return ModelCalls(calls=len({r.call_id for r in mine}), cost_usd=cost)


def _billed(record: CallRecord) -> bool:
    """An attempt the provider answered (valid or not): what a paid backend bills, cache hits aside.
    A request that failed without an answer (timeout, 5xx) reports no usage and counts as not billed."""
    if record.cache_hit:
        return False
    tokens = record.input_tokens + record.output_tokens + record.reasoning_tokens
    return record.status in ("ok", "schema_error") or tokens > 0


def usage_note(records: Sequence[CallRecord], *roles: str) -> str:
    """One log fragment for a step: calls, tokens and cost of ``roles`` so far in this process."""
    mine = [r for r in records if r.role in roles]
    costs = [r.cost_usd for r in mine]
    cost = "cost unknown" if any(c is None for c in costs) else f"${sum(c or 0.0 for c in costs):.4f}"
    tokens_in = sum(r.input_tokens for r in mine)
    tokens_out = sum(r.output_tokens + r.reasoning_tokens for r in mine)
    estimated = " (estimated)" if any(r.estimated for r in mine) else ""
    hits = sum(1 for r in mine if r.cache_hit)
    return (
        f"{'+'.join(roles)}: {len({r.call_id for r in mine})} call(s), {hits} cache hit(s), "
        f"{tokens_in} in / {tokens_out} out tokens{estimated}, {cost}"
    )


def ingest_record(report: IngestReport) -> dict[str, Any]:
    """ingest.json: the IngestReport as JSON."""
    data = dataclasses.asdict(report)
    data["alerts"] = [a.model_dump() for a in report.alerts]
    return data


def load_ingest_report(run_dir: Path) -> IngestReport | None:
    """The run's IngestReport back from ingest.json (None if ingestion did not complete)."""
    data = _load(run_dir / INGEST_FILE, None)
    if data is None:
        return None
    data["alerts"] = [Alert.model_validate(a) for a in data.get("alerts", [])]
    return IngestReport(**data)


def ingest_alerts_recorded(run_dir: Path, report: IngestReport) -> bool:
    """Whether the run's alerts.json lists every ingest alert (the run summary then shows them)."""
    alerts = _load(run_dir / "alerts.json", [])
    recorded = sum(a.get("stage") == "ingest" for a in alerts if isinstance(a, dict))
    return recorded >= len(report.alerts)


def _load(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


def _grading_line(grades: list[dict[str, Any]], alerts: list[dict[str, Any]]) -> str:
    """``Notation : partial — 13 note(s) : 7 chiffrée(s), 6 nulle(s) dont 3 en échec``."""
    status = grade_status(grades, alerts)
    if status == "none":
        return "Notation : none (pas de référence, rien à noter)"
    counts = grade_counts(grades)
    failed = f" dont {counts.failed} en échec" if counts.failed else ""
    return (
        f"Notation : {status} — {counts.total} note(s) : {counts.scored} chiffrée(s), "
        f"{counts.null} nulle(s){failed}"
    )


_SHOWN = 12  # ids listed per exclusion reason before "… (+N)"


def _excluded_lines(plan: dict[str, Any]) -> list[str]:
    """``Écartés (N) : …``, then one line per reason when plan.json records reasons."""
    excluded = plan.get("excluded", [])
    exclusions = plan.get("exclusions") or []
    if not exclusions:
        return [f"Écartés ({len(excluded)}) : {inline_text(', '.join(excluded)) or '—'}"]
    by_reason: dict[str, list[str]] = {}
    for e in exclusions:
        by_reason.setdefault(e["reason"], []).append(e["id"])
    lines = [f"Écartés ({len(excluded)}) :"]
    for reason, ids in by_reason.items():
        more = f" … (+{len(ids) - _SHOWN})" if len(ids) > _SHOWN else ""
        lines.append(f"  {inline_text(reason)} ({len(ids)}) : {inline_text(', '.join(ids[:_SHOWN]))}{more}")
    return lines


_KINDS = {
    "choice": "un choix (recommandation)",
    "inventory": "un inventaire (une entrée par élément trouvé)",
    "evolution": "une évolution (ce qui a changé, et quand)",
    "survey": "un état des lieux (sans recommandation)",
}
_ORIGINS = {"planner": "proposé par le planificateur", "corpus": "écrit ainsi par le corpus"}


def _request_lines(reading: Any) -> list[str]:
    """The request as code read it (plan.json ``request``): what it asks for, its options, period
    and axes; an item the planner proposed says so."""
    if not isinstance(reading, dict):
        return []
    origin = reading.get("origin") or {}

    def note(key: str) -> str:
        return f" ({_ORIGINS[origin[key]]})" if origin.get(key) in _ORIGINS else ""

    options = ", ".join(f"{inline_text(o)}{note(f'option:{o}')}" for o in reading.get("options", []))
    start, end = reading.get("period_start"), reading.get("period_end")
    period = f"{start or '…'} → {end or '…'}{note('period')}" if start or end else "aucune"
    lines = [
        f"Demande lue : {_KINDS.get(reading.get('kind', ''), '?')} ; langue {inline_text(str(reading.get('language')))} ; "
        f"options : {options or 'aucune'} ; période : {period}",
        f"  Axes ({len(reading.get('axes', []))}) :",
    ]
    for axis in reading.get("axes", []):
        key = inline_text(str(axis.get("key")))
        lines.append(
            f"    {key} {inline_text(clean_text(str(axis.get('title'))))}{note(str(axis.get('key')))}"
        )
    return lines


def _doc_read(doc_id: str, part: Any) -> str:
    """``doc-3`` or, read in part within the analyst's input budget, ``doc-3 (lu à 40 %)``."""
    doc_id = inline_text(doc_id)
    if not part:
        return doc_id
    try:
        percent = PartRead.model_validate(part).percent
    except ValueError:  # a findings.json of another layout: the id alone
        return doc_id
    return f"{doc_id} (lu à {percent} %)"


def _reading_lines(plan: dict[str, Any]) -> list[str]:
    """What code decided each analyst reads (plan.json ``reading``, issue 37): the reading budget,
    the same-subject groups, the documents no branch reads whole and the planner's exclusions the
    text overruled."""
    reading = plan.get("reading") or {}
    if not reading:
        return []
    budget = reading.get("budget")
    not_read = reading.get("not_read") or {}
    partial = [f"{st} : {', '.join(sorted(docs))}" for st, docs in sorted(not_read.items())]
    lines = [
        "Lecture : "
        + (f"budget de {budget} tokens par analyste ; " if budget else "")
        + (f"lus en partie : {inline_text(' ; '.join(partial))}" if partial else "tout est lu en entier")
    ]
    if groups := reading.get("groups"):
        lines.append(
            f"  lus ensemble (même mesure) : {inline_text(' ; '.join(', '.join(g) for g in groups))}"
        )
    if unplaced := reading.get("unplaced"):
        lines.append(f"  pertinents non lus (plafonds) : {inline_text(', '.join(unplaced))}")
    if overruled := reading.get("overruled"):
        lines.append(
            "  lus malgré l'exclusion du planificateur (sujet et passage pertinent dans le texte) : "
            + inline_text(", ".join(sorted(overruled)))
        )
    return lines


def _calls_note(run_dir: Path) -> str:
    """The same count as report.html's header (the dossier's calls), and the grading's apart: the
    header is written before grading, so a total alone disagreed with it (10 here, « 9 appel(s) »)."""
    records = read_journal(run_dir / "calls.jsonl")
    total, grading = model_calls(records), model_calls(records, grading=True)
    if not grading.calls:
        return f" ({total.calls} appel(s) au modèle)"
    return (
        f" ({total.calls} appel(s) au modèle : {total.calls - grading.calls} pour le dossier, comme "
        f"l'en-tête de report.html, et {grading.calls} pour la notation)"
    )


def format_summary(run_dir: Path) -> str:
    """Sub-tasks and their documents, excluded documents, alerts, rounds and verdict, usage per role,
    report path: the lines ``make run`` prints."""
    run = _load(run_dir / "run.json", {})
    plan = _load(run_dir / "plan.json", {"sub_tasks": [], "excluded": []})
    findings = _load(run_dir / "findings.json", {})
    alerts = _load(run_dir / "alerts.json", [])
    review = _load(run_dir / "review.json", {"validated": False, "rounds": []})
    lines = [f"Run {run.get('run_id', run_dir.name)} — {run.get('status', '?')} ({run.get('backend', '?')})"]
    if run.get("reused_from"):  # an unchanged night (veille.run.nightskip): no step was run again
        lines.append(
            f"Nuit inchangée : dossier du {inline_text(str(run['reused_from']))} repris, aucune étape refaite"
        )
    # Error-level alerts first (e.g. plan.low_coverage): a completed run may still miss its subject.
    errors = [
        a for a in alerts if a.get("severity") == "error" and not str(a.get("code", "")).startswith("ingest.")
    ]
    # Messages may quote a model or a document (a question, a remark): one plain line each.
    lines += [f"ATTENTION [{inline_text(a['code'])}] : {inline_text(a['message'])}" for a in errors[:_SHOWN]]
    if len(errors) > _SHOWN:
        lines.append(f"ATTENTION : … {len(errors) - _SHOWN} autre(s) alerte(s) d'erreur (alerts.json)")
    lines += _request_lines(plan.get("request"))
    lines.append(f"Sous-tâches ({len(plan['sub_tasks'])}) :")
    for st in plan["sub_tasks"]:
        status = findings.get(st["id"], {}).get("status", "?")
        flag = "" if status == "ok" else f" [{status}]"
        lines.append(f"  {inline_text(st['id'])}{flag} {inline_text(clean_text(st['question']))}")
        read = findings.get(st["id"], {}).get("read") or {}
        lines.append(f"        {', '.join(_doc_read(i, read.get(i)) for i in st['doc_ids'])}")
    lines += _reading_lines(plan)
    lines += _excluded_lines(plan)
    lines.append(f"Alertes ({len(alerts)}, regroupées par code) :")
    lines += alert_lines(alerts)
    rounds = review.get("rounds", [])
    verdict = "validé" if review.get("validated") else "NON validé"
    lines.append(f"Relecture : {len(rounds)} tour(s), {verdict}")
    for r in rounds:
        lines.append(
            f"  tour {r['round']} : moyenne {r['mean']:.2f}, {r['word_count']} mots, "
            f"{len(r['instructions'])} consigne(s){' — valide' if r['valid'] else ''}"
        )
    lines.append(_grading_line(_load(run_dir / GRADES_FILE, []), alerts))
    usage = role_usage(run_dir / "calls.jsonl")
    lines.append("Appels au modèle (par rôle) :" + ("" if usage else " aucun"))
    total_cost: float | None = 0.0
    for u in usage:
        cost = "inconnu" if u.cost_usd is None else f"{u.cost_usd:.4f} $"
        est = " (estimés)" if u.estimated else ""
        lines.append(
            f"  {u.role:<8} {u.calls:>3} appel(s), {u.http_requests:>3} requête(s) HTTP "
            f"({u.billed_attempts} répondue(s)), "
            f"{u.input_tokens:>7} tokens entrée, "
            f"{u.output_tokens:>6} sortie{est}, {cost}"
            + (f", {u.cache_hits} depuis le cache" if u.cache_hits else "")
        )
        total_cost = None if total_cost is None or u.cost_usd is None else total_cost + u.cost_usd
    lines.append(
        f"Coût total : {'inconnu' if total_cost is None else f'{total_cost:.4f} $'}{_calls_note(run_dir)}"
    )
    report = run_dir / "report.md"
    lines.append(f"Rapport : {report if report.exists() else '(non écrit)'}")
    lines.append(f"Dossier du run : {run_dir}")
    return "\n".join(lines)
