"""`veille grade`: score {prompt, response, reference} rows with the seed-002 graders, write Parquet."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["grade", "register"]


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.3f}"


def grade(
    input_path: Annotated[
        Path,
        typer.Argument(metavar="INPUT.jsonl", help="One JSON object per line: prompt, response, reference."),
    ],
    grader: Annotated[
        list[str],
        typer.Option(
            "--grader",
            "-g",
            help="rouge_l | numeric | judge | judge+similarity | judge+numbers | exact | contains | "
            "json_format | label (repeat or comma-separate).",
        ),
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Parquet file (default: INPUT.scores.parquet).")
    ] = None,
    schema: Annotated[Path | None, typer.Option(help="JSON Schema file for the json_format grader.")] = None,
    labels: Annotated[str | None, typer.Option(help="Known labels for the label grader: a,b,c.")] = None,
    case_sensitive: Annotated[bool, typer.Option(help="exact/contains/label compare case.")] = False,
    backend: Annotated[
        str | None, typer.Option(help="Judge backend: gemini | offline | auto (default: settings).")
    ] = None,
) -> None:
    """Grade responses against references; print each row's score and a summary per grader.

    Several responses per prompt are graded together: the judge sees them all in one call.
    """
    from veille.graders.batch import JUDGE_GRADERS, GradeInputError, grade_rows
    from veille.models.base import ModelError

    names, rows, options = _read_inputs(input_path, grader, schema, labels, case_sensitive)
    if backend is not None and backend not in ("gemini", "offline", "auto"):
        typer.echo(f"error: --backend {backend!r}: expected gemini, offline or auto", err=True)
        raise typer.Exit(2)
    target = output or input_path.with_name(f"{input_path.stem}.scores.parquet")
    client = _judge_client(backend) if any(n in JUDGE_GRADERS for n in names) else None
    calls: list[Any] = []
    try:
        graded = grade_rows(rows, names, client=client, options=options, source=input_path)
    except GradeInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except ModelError as exc:
        typer.echo(f"error: the judge failed: {exc}", err=True)
        raise typer.Exit(1) from None
    finally:
        if client is not None:
            calls = client.journal.records()
            client.close()
    _print_scores(graded, names, calls)
    from veille.graders.batch import write_scores

    write_scores(graded, target)
    typer.echo(f"scores: {target}")


def _read_inputs(
    input_path: Path, grader: list[str], schema: Path | None, labels: str | None, case_sensitive: bool
) -> tuple[list[str], list[Any], dict[str, Any]]:
    """Grader names, rows and grader options; bad input is one line and exit code 2."""
    from veille.graders.batch import GradeInputError, parse_grader_names, read_rows

    try:
        names = parse_grader_names(grader)
        rows = read_rows(input_path)
        options: dict[str, Any] = {"case_sensitive": case_sensitive}
        if schema is not None:
            try:
                options["schema"] = json.loads(schema.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise GradeInputError(
                    f"--schema {schema}: expected a readable JSON Schema file ({exc})"
                ) from None
        if labels is not None:
            options["labels"] = [label.strip() for label in labels.split(",") if label.strip()]
    except GradeInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    return names, rows, options


def _judge_client(backend: str | None) -> Any:
    from veille.backends import build_client
    from veille.settings import Settings

    try:
        settings = Settings.from_params(backend=backend)
        return build_client(settings, run_id=f"grade-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
    except Exception as exc:  # no key, bad settings: say so instead of a traceback
        typer.echo(f"error: cannot build the judge's model client: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None


def _print_scores(graded: list[Any], names: list[str], calls: list[Any]) -> None:
    from veille.graders.batch import summarise

    width = max(len(n) for n in names)
    for item in graded:
        scores = "  ".join(f"{name}={_fmt(item.results[name].score)}" for name in names)
        typer.echo(f"line {item.row.line:>4}  response {item.response_index + 1:>2}  {scores}")
    typer.echo("")
    typer.echo(f"{'grader':<{width}}  version  scored  no score   mean    min    max")
    for s in summarise(graded, names):
        typer.echo(
            f"{s['grader']:<{width}}  {s['version']:>7}  {s['scored']:>6}  {s['no_score']:>8}  "
            f"{_fmt(s['mean']):>5}  {_fmt(s['min']):>5}  {_fmt(s['max']):>5}"
        )
    if calls:
        known = [c.cost_usd for c in calls if c.cost_usd is not None]
        cost = f"{sum(known):.4f} $" + ("" if len(known) == len(calls) else " (lower bound: unpriced model)")
        typer.echo(f"judge: {len({c.call_id for c in calls})} call(s), {len(calls)} attempt(s), {cost}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("grade")(grade)
