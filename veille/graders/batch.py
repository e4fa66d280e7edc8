"""Batch grading of ``{prompt, response, reference}`` rows (the ``veille grade`` command, seed 002).

Rows are grouped by prompt (first-appearance order): the judge sees every response to a prompt in
one call, and its results are shared by ``judge``, ``judge+similarity`` and ``judge+numbers`` so a
group costs one judge call whatever the graders asked for. Scores are written as Parquet.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from veille.arrowrows import table_from_rows
from veille.graders.base import Grader, GraderResult
from veille.graders.combos import JudgeNumbers, JudgeSimilarity
from veille.graders.exact import Contains, ExactMatch, JsonFormat, LabelCheck
from veille.graders.judge import JudgeGrader
from veille.graders.numeric import NumericGrader
from veille.graders.rouge import RougeL
from veille.roles.base import Asker

__all__ = [
    "GRADER_NAMES",
    "SCORES_SCHEMA",
    "GradeInputError",
    "GradedRow",
    "InputRow",
    "grade_rows",
    "parse_grader_names",
    "prompt_groups",
    "read_rows",
    "summarise",
    "write_scores",
]

JUDGE_GRADERS = ("judge", "judge+similarity", "judge+numbers")
GRADER_NAMES = ("rouge_l", "numeric", *JUDGE_GRADERS, "exact", "contains", "json_format", "label")
_ALIASES = {
    "rouge": "rouge_l",
    "rouge-l": "rouge_l",
    "similarity": "rouge_l",
    "numbers": "numeric",
    "json": "json_format",
    "judge+rouge": "judge+similarity",
    "judge+numeric": "judge+numbers",
}

SCORES_SCHEMA = pa.schema(
    [
        pa.field("line", pa.int32(), nullable=False),
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("response_index", pa.int32(), nullable=False),  # 0-based index within its prompt group
        pa.field("grader", pa.string(), nullable=False),
        pa.field("version", pa.string(), nullable=False),
        pa.field("score", pa.float64()),
        pa.field("model", pa.string()),
        pa.field("details_json", pa.string()),
    ]
)


class GradeInputError(ValueError):
    """A bad input row or option; the message names the file, the line and what is expected."""


@dataclass(frozen=True)
class InputRow:
    line: int
    prompt: str
    response: str
    reference: str


@dataclass(frozen=True)
class GradedRow:
    row: InputRow
    response_index: int
    results: dict[str, GraderResult]  # grader name -> result


def parse_grader_names(values: Iterable[str]) -> list[str]:
    """``["judge+numbers,rouge"]`` → ``["judge+numbers", "rouge_l"]`` (aliases resolved, order kept)."""
    names: list[str] = []
    for value in values:
        for raw in value.split(","):
            name = raw.strip().lower()
            if not name:
                continue
            name = _ALIASES.get(name, name)
            if name not in GRADER_NAMES:
                raise GradeInputError(
                    f"--grader {raw.strip()!r}: unknown grader; expected one of {', '.join(GRADER_NAMES)}"
                )
            if name not in names:
                names.append(name)
    if not names:
        raise GradeInputError(f"give at least one --grader ({', '.join(GRADER_NAMES)})")
    return names


def read_rows(path: Path) -> list[InputRow]:
    """Read the JSONL input. Every non-blank line must be an object with string prompt/response/reference."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GradeInputError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise GradeInputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    rows: list[InputRow] = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GradeInputError(
                f"{path} line {line_number}: invalid JSON ({exc.msg} at column {exc.colno}); "
                'expected {"prompt": ..., "response": ..., "reference": ...}'
            ) from None
        if not isinstance(value, dict):
            raise GradeInputError(
                f"{path} line {line_number}: expected a JSON object with prompt, response and reference, "
                f"got a {type(value).__name__}"
            )
        fields: dict[str, str] = {}
        for name in ("prompt", "response", "reference"):
            field = value.get(name)
            if not isinstance(field, str):
                problem = "is missing" if name not in value else f"has JSON type {type(field).__name__}"
                raise GradeInputError(
                    f"{path} line {line_number}: field {name!r} {problem}; expected a string"
                )
            fields[name] = field
        unknown = sorted(set(value) - {"prompt", "response", "reference"})
        if unknown:
            raise GradeInputError(
                f"{path} line {line_number}: unknown field(s) {unknown}; expected prompt, response, reference"
            )
        rows.append(InputRow(line=line_number, **fields))
    if not rows:
        raise GradeInputError(f"{path}: no rows (expected one JSON object per line)")
    return rows


def prompt_groups(rows: Sequence[InputRow], path: Path | str = "input") -> list[list[InputRow]]:
    """Rows grouped by prompt, in first-appearance order (one judge call per group)."""
    return _groups(rows, path)


def _groups(rows: Sequence[InputRow], path: Path | str) -> list[list[InputRow]]:
    groups: dict[str, list[InputRow]] = {}
    for row in rows:
        group = groups.setdefault(row.prompt, [])
        if group and group[0].reference != row.reference:
            raise GradeInputError(
                f"{path} line {row.line}: reference differs from line {group[0].line} for the same prompt; "
                "the judge compares all responses to a prompt against one reference"
            )
        group.append(row)
    return list(groups.values())


def _rule_graders(options: Mapping[str, Any]) -> dict[str, Callable[[], Grader]]:
    case_sensitive = bool(options.get("case_sensitive", False))
    return {
        "rouge_l": RougeL,
        "numeric": NumericGrader,
        "exact": lambda: ExactMatch(case_sensitive=case_sensitive),
        "contains": lambda: Contains(case_sensitive=case_sensitive),
        "json_format": lambda: JsonFormat(options.get("schema")),
        "label": lambda: LabelCheck(options.get("labels") or ()),
    }


def grade_rows(
    rows: Sequence[InputRow],
    graders: Sequence[str],
    *,
    client: Asker | None = None,
    options: Mapping[str, Any] | None = None,
    source: Path | str = "input",
    progress: Callable[[int, int], None] | None = None,
) -> list[GradedRow]:
    """Grade every row with every named grader. Judge graders need ``client``; ``label`` needs labels.
    ``progress(done, total)`` is called after each prompt group."""
    options = dict(options or {})
    if "label" in graders and not options.get("labels"):
        raise GradeInputError("grader 'label' needs the known labels (--labels a,b,c)")
    needs_judge = any(g in JUDGE_GRADERS for g in graders)
    if needs_judge and client is None:
        raise GradeInputError("judge graders need a model client")
    factories = _rule_graders(options)
    try:
        instances = {name: factories[name]() for name in graders if name in factories}
    except ValueError as exc:  # e.g. an invalid JSON Schema for json_format
        raise GradeInputError(str(exc)) from None
    judge = JudgeGrader(client) if needs_judge and client is not None else None
    rouge, numeric = RougeL(), NumericGrader()

    graded: list[GradedRow] = []
    groups = _groups(rows, source)
    for done, group in enumerate(groups, start=1):
        prompt, reference = group[0].prompt, group[0].reference
        responses = [r.response for r in group]
        per_grader: dict[str, list[GraderResult]] = {
            name: grader.grade_group(prompt, reference, responses) for name, grader in instances.items()
        }
        if judge is not None:
            judged = judge.grade_group(prompt, reference, responses)  # one call per prompt
            if "judge" in graders:
                per_grader["judge"] = judged
            if "judge+similarity" in graders:
                similar = per_grader.get("rouge_l") or rouge.grade_group(prompt, reference, responses)
                per_grader["judge+similarity"] = JudgeSimilarity(judge).combine_results(judged, similar)
            if "judge+numbers" in graders:
                figures = per_grader.get("numeric") or numeric.grade_group(prompt, reference, responses)
                per_grader["judge+numbers"] = JudgeNumbers(judge).combine_results(judged, figures)
        for index, row in enumerate(group):
            graded.append(
                GradedRow(row=row, response_index=index, results={g: per_grader[g][index] for g in graders})
            )
        if progress is not None:
            progress(done, len(groups))
    graded.sort(key=lambda g: g.row.line)
    return graded


def summarise(graded: Sequence[GradedRow], graders: Sequence[str]) -> list[dict[str, Any]]:
    """Per grader: rows scored, rows without a score, mean, min and max."""
    summary = []
    for name in graders:
        scores = [g.results[name].score for g in graded]
        known = [s for s in scores if s is not None]
        summary.append(
            {
                "grader": name,
                "version": graded[0].results[name].version if graded else "",
                "scored": len(known),
                "no_score": len(scores) - len(known),
                "mean": fmean(known) if known else None,
                "min": min(known) if known else None,
                "max": max(known) if known else None,
            }
        )
    return summary


def write_scores(graded: Sequence[GradedRow], path: Path) -> Path:
    """One row per (input line, grader), written atomically (temporary name, then rename)."""
    records = [
        {
            "line": g.row.line,
            "prompt": g.row.prompt,
            "response_index": g.response_index,
            "grader": result.grader,
            "version": result.version,
            "score": result.score,
            "model": result.model,
            "details_json": json.dumps(result.details, ensure_ascii=False, sort_keys=True, default=str),
        }
        for g in graded
        for result in g.results.values()
    ]
    table = table_from_rows(records, SCORES_SCHEMA)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        pq.write_table(table, temp)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return path
