"""Grading a run's dossier against the corpus reference (``reference/dossier.md`` + ``facts.yaml``).

What is measured (each a versioned result with a ``target``: ``final`` or ``round-N``):

- ``rouge_l``, ``numeric`` (on ``facts.yaml`` figures), ``judge``, ``judge+similarity``,
  ``judge+numbers`` on the final report;
- ``judge`` on every review round's draft, in the *same* call as the final report, so the scores
  are comparable and each run records whether revision improved the dossier (view
  ``revision_gain``);
- structural checks from ``facts.yaml``: ``structure.groups`` (each group of documents planned in one
  sub-task), ``structure.keep`` (documents to keep are planned), ``structure.exclude`` (documents
  to exclude are not), ``structure.contradictions`` (each contradiction's keywords appear in the
  report), ``structure.ledger`` (each contradiction stated in « Contradictions tranchées » with a
  retained and a rejected document; key points left unmarked on the rejected side are listed) and
  ``structure.citations`` (share of cited numbers that match a source).

Texts are compared without their ``## Sources`` list (built by code, formatted differently from the
reference's); ROUGE-L also ignores citation markers ``[n]``, whose numbering is per run.
A judge failure gives ``score: null`` with the error in ``details`` (the run is not failed for it).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from veille.citations import cited_numbers
from veille.corpus.reference import Facts, Reference
from veille.dossier import (
    KEY_POINTS_SECTION,
    LEDGER_SECTION,
    ledger_entries,
    parse_ledger_entry,
    rendered_key_points,
    supersedes,
    without_news,
)
from veille.graders.base import GraderResult
from veille.graders.combos import JudgeNumbers, JudgeSimilarity
from veille.graders.judge import JudgeGrader
from veille.graders.numeric import NumericGrader, contains_verbatim
from veille.graders.parts import PartJudging, judge_by_parts
from veille.graders.rouge import RougeL
from veille.gradestatus import GRADES_FILE
from veille.models.base import ModelError
from veille.roles.base import Asker
from veille.textstats import split_sections

__all__ = [
    "StructuralChecks",
    "TargetedGrade",
    "grade_dossier",
    "strip_sources",
    "write_grades",
]

_SOURCES_HEADING = re.compile(r"^##\s+Sources\s*$", re.MULTILINE | re.IGNORECASE)
_CITATION = re.compile(r"\[(\d+)\]")


class TargetedGrade(GraderResult):
    """A grader result for one text of the run: ``final`` (report.md), ``round-N`` (a review draft)
    or ``part:<key>`` (a part of the final report, veille.graders.parts)."""

    target: str = "final"
    carried_over: bool = False  # a part's score from the night that graded it unchanged


def _targeted(result: GraderResult, target: str) -> TargetedGrade:
    return TargetedGrade(**result.model_dump(), target=target)


def strip_sources(markdown: str) -> str:
    """The text before the ``## Sources`` section (the bibliography is written by code)."""
    match = _SOURCES_HEADING.search(markdown)
    return (markdown[: match.start()] if match else markdown).strip()


def _without_citations(text: str) -> str:
    return _CITATION.sub("", text)


class StructuralChecks:
    """Checks of the plan and the report against ``facts.yaml`` (version bumps when a rule changes)."""

    name: ClassVar[str] = "structure"
    version: ClassVar[str] = "1"

    def _result(self, check: str, score: float | None, details: Mapping[str, Any]) -> GraderResult:
        return GraderResult(
            grader=f"{self.name}.{check}", version=self.version, score=score, details=dict(details)
        )

    def _ledger(self, facts: Facts, report: str | None, sources: Sequence[Mapping[str, Any]]) -> GraderResult:
        """``structure.ledger``: reference contradictions stated with retained and rejected sources."""
        if not facts.contradictions:
            return self._result("ledger", None, {"reason": "no contradictions in facts.yaml"})
        if report is None:
            return self._result("ledger", None, {"reason": "no report.md"})
        score, details = _ledger_check(facts, report, sources)
        return self._result("ledger", score, details)

    def check(
        self,
        facts: Facts,
        *,
        plan: Mapping[str, Any] | None,
        report: str | None,
        sources: Sequence[Mapping[str, Any]],
    ) -> list[GraderResult]:
        subtasks = [
            (str(s.get("id")), set(map(str, s.get("doc_ids") or [])))
            for s in (plan or {}).get("sub_tasks") or []
            if isinstance(s, Mapping)
        ]
        return [
            *self._plan_checks(facts, plan, subtasks),
            self._contradictions(facts, report),
            self._ledger(facts, report, sources),
            self._citations(report, sources),
        ]

    def _plan_checks(
        self, facts: Facts, plan: Mapping[str, Any] | None, subtasks: list[tuple[str, set[str]]]
    ) -> list[GraderResult]:
        """groups (every document of a group in one and the same sub-task), keep, exclude."""
        planned = set().union(*(docs for _, docs in subtasks)) if subtasks else set()
        no_plan = {"reason": "no plan.json in the run folder"}
        results: list[GraderResult] = []
        if not facts.groups:
            results.append(self._result("groups", None, {"reason": "no groups in facts.yaml"}))
        elif plan is None:
            results.append(self._result("groups", None, no_plan))
        else:
            per_group: list[dict[str, Any]] = []
            for group in facts.groups:
                together = [sid for sid, docs in subtasks if set(group) <= docs]
                per_group.append({"docs": group, "ok": bool(together), "subtasks": together})
            ok = sum(g["ok"] for g in per_group)
            results.append(self._result("groups", ok / len(per_group), {"groups": per_group}))
        if not facts.keep:
            results.append(self._result("keep", None, {"reason": "no keep list in facts.yaml"}))
        elif plan is None:
            results.append(self._result("keep", None, no_plan))
        else:
            dropped = sorted(d for d in facts.keep if d not in planned)
            results.append(self._result("keep", 1 - len(dropped) / len(facts.keep), {"dropped": dropped}))
        if not facts.exclude:
            results.append(self._result("exclude", None, {"reason": "no exclude list in facts.yaml"}))
        elif plan is None:
            results.append(self._result("exclude", None, no_plan))
        else:
            leaked = sorted(d for d in facts.exclude if d in planned)
            results.append(
                self._result("exclude", 1 - len(leaked) / len(facts.exclude), {"planned_anyway": leaked})
            )
        return results

    def _contradictions(self, facts: Facts, report: str | None) -> GraderResult:
        """Resolved when all their keywords appear in the report."""
        if not facts.contradictions:
            return self._result("contradictions", None, {"reason": "no contradictions in facts.yaml"})
        if report is None:
            return self._result("contradictions", None, {"reason": "no report.md"})
        per_item: list[dict[str, Any]] = []
        for c in facts.contradictions:
            missing = [k for k in c.keywords if not contains_verbatim(report, k)]
            per_item.append({"id": c.id, "resolved": not missing, "missing_keywords": missing})
        resolved = sum(i["resolved"] for i in per_item)
        return self._result("contradictions", resolved / len(per_item), {"contradictions": per_item})

    def _citations(self, report: str | None, sources: Sequence[Mapping[str, Any]]) -> GraderResult:
        """Share of cited numbers that match a source; an uncited report scores 0."""
        if report is None:
            return self._result("citations", None, {"reason": "no report.md"})
        numbers = {int(s["number"]) for s in sources if isinstance(s.get("number"), int)}
        cited = sorted(cited_numbers(strip_sources(report)))  # "[1, 3]" lists count too
        invalid = [n for n in cited if n not in numbers]
        score = (len(cited) - len(invalid)) / len(cited) if cited else 0.0
        details = {"cited": len(cited), "invalid": invalid, "uncited_sources": sorted(numbers - set(cited))}
        return self._result("citations", score, details)


def _ledger_check(
    facts: Facts, report: str, sources: Sequence[Mapping[str, Any]]
) -> tuple[float | None, dict[str, Any]]:
    """Each reference contradiction stated in the ledger (an entry retaining one of its documents
    and rejecting another), and the key points left unmarked although they cite only the rejected
    side of an entry on their subject (veille.dossier.supersedes)."""
    ids = {int(s["number"]): str(s.get("id")) for s in sources if isinstance(s.get("number"), int)}
    sections = split_sections(strip_sources(report))
    entries = ledger_entries(sections.get(LEDGER_SECTION, ""))
    per_item: list[dict[str, Any]] = []
    for c in facts.contradictions:
        docs = set(c.docs)
        stated = [
            line
            for retained, rejected, line in entries
            if {ids.get(n) for n in retained} & docs and {ids.get(n) for n in rejected} & docs
        ]
        per_item.append({"id": c.id, "stated": bool(stated)})
    ledger = [e for _, _, line in entries if (e := parse_ledger_entry(line)) is not None]
    unmarked = [
        p.text
        for p in rendered_key_points(sections.get(KEY_POINTS_SECTION, ""))
        if not p.superseded and any(supersedes(e, p) for e in ledger)
    ]
    score = sum(bool(i["stated"]) for i in per_item) / len(per_item) if per_item else None
    return score, {"contradictions": per_item, "entries": len(entries), "superseded_unmarked": unmarked}


def _read_json(path: Path) -> Any:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from exc


def _judge_targets(report: str | None, review: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(target, text) pairs the judge sees together: every round's draft, then the final report."""
    pairs: list[tuple[str, str]] = []
    for position, item in enumerate((review or {}).get("rounds") or [], start=1):
        if isinstance(item, Mapping) and isinstance(item.get("draft"), str) and item["draft"].strip():
            pairs.append((f"round-{item.get('round') or position}", strip_sources(item["draft"])))
    if report is not None:
        pairs.append(("final", strip_sources(report)))
    return pairs


def grade_dossier(
    run_dir: Path,
    reference: Reference,
    *,
    request: str,
    client: Asker | None = None,
    parts: PartJudging | None = None,
) -> list[TargetedGrade]:
    """Grade one run folder against the reference. ``client`` None skips the judge and its
    combinations; ``parts``: judge the final report by parts, carrying over the unchanged ones
    (veille.graders.parts) when no revised draft has to be compared with it."""
    run_dir = Path(run_dir)
    report_path = run_dir / "report.md"
    report = report_path.read_text(encoding="utf-8") if report_path.exists() else None
    # Quality is graded on the five sections: the news section (what changed since the previous
    # dossier) varies night to night and is not the writer's; structural checks read it all.
    graded = without_news(report) if report is not None else None
    review = _read_json(run_dir / "review.json")
    plan = _read_json(run_dir / "plan.json")
    sources = _read_json(run_dir / "sources.json") or []
    reference_body = strip_sources(reference.dossier)
    grades: list[TargetedGrade] = []

    rouge = RougeL()
    numeric = NumericGrader(reference.facts.figures)
    final_rouge = final_numeric = None
    if graded is not None:
        body = strip_sources(graded)
        final_rouge = rouge.grade_group(
            request, _without_citations(reference_body), [_without_citations(body)]
        )[0]
        final_numeric = numeric.grade_group(request, reference_body, [body])[0]
        grades += [_targeted(final_rouge, "final"), _targeted(final_numeric, "final")]

    if client is not None:
        pairs = _judge_targets(graded, review)
        # Identical texts (a validated last draft is the final report) are judged once.
        unique = list(dict.fromkeys(text for _, text in pairs))
        # By parts when no revised draft is to be compared with the report: one round (the
        # report is that draft, finalised: news placed, citations renumbered).
        by_parts = parts is not None and graded is not None and len(pairs) <= 2
        judge = JudgeGrader(client, criteria="dossier_part" if by_parts else "dossier")
        try:
            if by_parts and parts is not None:
                keep = bool((review or {}).get("validated"))
                final, part_grades = judge_by_parts(
                    judge, request, reference_body, unique[-1], sources, parts, keep=keep
                )
                judged = dict.fromkeys(unique, final)  # its one round: the same dossier
                grades += [
                    TargetedGrade(
                        **g.result.model_dump(), target=f"part:{g.key}", carried_over=g.carried_over
                    )
                    for g in part_grades
                ]
            else:
                judged = dict(zip(unique, judge.grade_group(request, reference_body, unique), strict=True))
        except ModelError as exc:
            failure = judge.result(None, {"error": f"{type(exc).__name__}: {exc}"})
            judged = dict.fromkeys(unique, failure)
        for target, text in pairs:
            grades.append(_targeted(judged[text], target))
        if graded is not None and final_rouge is not None and final_numeric is not None:
            final_judge = judged[strip_sources(graded)]
            similarity = JudgeSimilarity(judge).combine_results([final_judge], [final_rouge])[0]
            numbers = JudgeNumbers(judge).combine_results([final_judge], [final_numeric])[0]
            grades += [_targeted(similarity, "final"), _targeted(numbers, "final")]

    structure = StructuralChecks().check(reference.facts, plan=plan, report=report, sources=sources)
    grades += [_targeted(r, "final") for r in structure]
    return grades


def write_grades(run_dir: Path, grades: Sequence[GraderResult]) -> Path:
    """Write ``grades.json`` atomically (temporary name, then rename)."""
    path = Path(run_dir) / GRADES_FILE
    temp = path.with_name(f".{path.name}.tmp")
    payload = [g.model_dump() for g in grades]
    temp.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    os.replace(temp, path)
    return path
