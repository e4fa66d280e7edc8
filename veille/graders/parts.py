"""The judge on the parts of the report that changed (issue 40 item 3).

A night after a validated dossier rewrites only the axes whose findings changed (veille.steps.sections)
and the conclusions; judging the whole report again cost as much as a full night's judge. So in the
flow, when the sections are kept across nights, the final report is judged **by parts**: each axis
section (``axe:<title>``) and the rest (``conclusions``: synthesis, ledger, uncertainties,
recommendation), each one response of one judge call (criteria ``dossier_part``). A part whose text —
its citations written as document ids, so tonight's renumbering does not matter — was graded on a
validated night against the same reference, request and judge (model key: its settings and the
digest of its code) keeps that night's score: ``carried_over`` in grades.json and in the warehouse's
``grader_scores``, with the night it comes from. The report's ``judge`` score is the mean of its
parts' scores weighted by their words, so an unchanged report scores what it scored.

Only a validated night's scores are kept (a part of a refused draft is not a reference point), in
``<warehouse>/cache/judged.sqlite``; derived state: unreadable, it is moved aside and every part is
judged again. Nights whose review revised the draft judge every round and the final report whole,
as before (the rounds are compared with the final report in one call).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veille.dossier import KEY_POINTS_SECTION
from veille.fingerprint import text_digest
from veille.graders.base import GraderResult
from veille.graders.judge import JudgeGrader
from veille.textstats import count_words

__all__ = [
    "JUDGED_FILE",
    "PARTS_VERSION",
    "JudgedParts",
    "PartJudging",
    "cited_as_ids",
    "judge_by_parts",
    "report_parts",
]

JUDGED_FILE = "judged.sqlite"
# Suffix of the judge version of a report scored as the mean of its parts.
PARTS_VERSION = "+parts"
CONCLUSIONS = "conclusions"
_SQL = Path(__file__).resolve().parent / "sql"
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_HEADING = re.compile(r"^##\s+(.+?)\s*#*\s*$")


def _sql(name: str) -> str:
    return (_SQL / f"{name}.sql").read_text(encoding="utf-8")


def report_parts(body: str) -> dict[str, str]:
    """``axe:<title>`` -> that axis's ``###`` block (heading included), in report order, then
    ``conclusions`` -> everything else (the other sections, the key points' heading)."""
    parts: dict[str, list[str]] = {CONCLUSIONS: []}
    current, in_points = CONCLUSIONS, False
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading and not line.startswith("###"):
            in_points = heading.group(1).strip() == KEY_POINTS_SECTION
            current = CONCLUSIONS
        elif in_points and line.startswith("### "):
            current = f"axe:{line[4:].strip()}"
            parts.setdefault(current, [])
        parts[current].append(line)
    ordered = {k: "\n".join(v).strip() for k, v in parts.items() if k != CONCLUSIONS}
    return {**ordered, CONCLUSIONS: "\n".join(parts[CONCLUSIONS]).strip()}


def cited_as_ids(text: str, sources: Sequence[Mapping[str, Any]]) -> str:
    """``text`` with its citations written as document ids (``[3, 5]`` -> ``[doc-a, doc-b]``): what a
    part says, whatever number tonight gives its sources."""
    ids = {int(s["number"]): str(s.get("id")) for s in sources if isinstance(s.get("number"), int)}

    def as_ids(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"\s*,\s*", match.group(1))]
        return "[" + ", ".join(ids.get(n, f"?{n}") for n in numbers) + "]"

    return _CITATION.sub(as_ids, text)


class JudgedParts:
    """Part scores by digest in one SQLite file; every failure degrades to "nothing carried"."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path)
        con.executescript(_sql("judged_schema"))
        return con

    def _set_aside(self) -> None:
        if self.path.is_file():
            with suppress(OSError):
                self.path.replace(self.path.with_name(self.path.name + ".corrupt"))

    def get(self, keys: Sequence[str]) -> dict[str, tuple[float, dict[str, Any], str]]:
        """key -> (score, details, run id) of the keys found."""
        if not keys:
            return {}
        try:
            with closing(self._connect()) as con:
                query = _sql("judged_get").format(marks=",".join("?" * len(keys)))
                rows = list(con.execute(query, list(keys)))
        except (sqlite3.DatabaseError, OSError):
            self._set_aside()
            return {}
        out: dict[str, tuple[float, dict[str, Any], str]] = {}
        for key, score, details, run_id in rows:
            with suppress(ValueError, TypeError):
                out[str(key)] = (float(score), dict(json.loads(details)), str(run_id))
        return out

    def put(self, rows: Sequence[tuple[str, float, dict[str, Any], str]]) -> None:
        try:
            with closing(self._connect()) as con, con:
                con.executemany(
                    _sql("judged_put"),
                    [(k, s, json.dumps(d, ensure_ascii=False, sort_keys=True), r) for k, s, d, r in rows],
                )
        except (sqlite3.DatabaseError, OSError):
            self._set_aside()


@dataclass(frozen=True)
class PartJudging:
    """How the flow judges by parts: where scores are kept, the judge's model key, tonight's run."""

    cache: JudgedParts
    judge_key: str
    run_id: str


@dataclass(frozen=True)
class PartGrade:
    key: str
    result: GraderResult
    carried_over: bool


def judge_by_parts(
    judge: JudgeGrader,
    request: str,
    reference: str,
    body: str,
    sources: Sequence[Mapping[str, Any]],
    how: PartJudging,
    *,
    keep: bool,
) -> tuple[GraderResult, list[PartGrade]]:
    """(the report's judge result, one per part). Parts graded on a validated night are carried
    over; the others are judged in one call (model errors propagate); ``keep``: tonight's review
    validated the report, so its part scores are kept for later nights."""
    parts = report_parts(body)
    digests = {
        key: text_digest(
            "judge-part", how.judge_key, judge.criteria, request, reference, cited_as_ids(text, sources)
        )
        for key, text in parts.items()
    }
    carried = how.cache.get(list(digests.values()))
    asked = [key for key in parts if digests[key] not in carried]
    judged = dict(zip(asked, judge.grade_group(request, reference, [parts[k] for k in asked]), strict=True))
    out: list[PartGrade] = []
    for key in parts:
        if key in judged:
            out.append(PartGrade(key, judged[key], carried_over=False))
            continue
        score, details, run_id = carried[digests[key]]
        model = details.pop("model", None)
        result = judge.result(score, {**details, "carried_over": True, "from_run": run_id}, model=model)
        out.append(PartGrade(key, result, carried_over=True))
    if keep:
        how.cache.put(
            [
                (digests[g.key], g.result.score, {**g.result.details, "model": g.result.model}, how.run_id)
                for g in out
                if not g.carried_over and g.result.score is not None
            ]
        )
    words = {key: max(1, count_words(text)) for key, text in parts.items()}
    scores = [(g.result.score, words[g.key]) for g in out]
    mean = (
        None
        if any(s is None for s, _ in scores)
        else sum(s * w for s, w in scores if s is not None) / sum(w for _, w in scores)
    )
    final = judge.result(
        mean,
        {
            "by_parts": {g.key: g.result.score for g in out},
            "carried_over": [g.key for g in out if g.carried_over],
            "formula": "mean of the parts' scores weighted by their words",
        },
        model=next((g.result.model for g in out if g.result.model), None),  # the model that scored them
    )
    # A mean of parts is on another scale than a whole report's grade (a part is judged on what it
    # covers): its own version, so trends and the regression check compare like with like.
    final = final.model_copy(update={"version": f"{final.version}{PARTS_VERSION}"})
    return final, out
