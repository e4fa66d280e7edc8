"""`veille grade`: score {prompt, response, reference} rows with the seed-002 graders, write Parquet."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from veille.providers import backend_choices, backend_help, provider

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
    backend: Annotated[str | None, typer.Option(help="Judge backend: " + backend_help())] = None,
    warehouse: Annotated[
        Path | None, typer.Option(help="Warehouse the judge's calls are recorded in.")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Start a paid judge run above --confirm-above.")
    ] = False,
    confirm_above: Annotated[
        float, typer.Option(help="Estimated judge cost (USD) above which a paid run needs --yes.")
    ] = 0.50,
) -> None:
    """Grade responses against references; print each row's score and a summary per grader.

    Several responses per prompt are graded together: the judge sees them all in one call. Before
    judge calls, the estimate (calls, tokens, cost) is printed; a paid run above --confirm-above
    (or of unknown cost) needs --yes. The judge's calls are recorded in the warehouse as a run.
    """
    from veille.graders.batch import JUDGE_GRADERS, GradeInputError, grade_rows
    from veille.models.base import ModelError

    names, rows, options = _read_inputs(input_path, grader, schema, labels, case_sensitive)
    if backend is not None and backend not in backend_choices():
        typer.echo(f"error: --backend {backend!r}: expected one of {', '.join(backend_choices())}", err=True)
        raise typer.Exit(2)
    target = output or input_path.with_name(f"{input_path.stem}.scores.parquet")
    judged = any(n in JUDGE_GRADERS for n in names)
    settings = _settings(backend, warehouse) if judged else None
    if settings is not None:
        _estimate_or_stop(settings, rows, input_path, yes=yes, confirm_above=confirm_above)
    started = datetime.now(UTC)
    run_id, run_dir, client = _judge_client(settings, started) if settings is not None else (None, None, None)
    calls: list[Any] = []
    status = "failed"
    try:
        graded = grade_rows(
            rows, names, client=client, options=options, source=input_path, progress=_progress
        )
        status = "completed"
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
        if settings is not None and run_dir is not None and run_id is not None:
            if calls or status == "completed":
                _record(settings, run_dir, run_id, started, status, input_path)
            else:  # stopped before any call (bad input): nothing to record
                _discard(run_dir)
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


def _settings(backend: str | None, warehouse: Path | None) -> Any:
    from veille.settings import Settings

    try:
        return Settings.from_params(backend=backend, warehouse=warehouse)
    except Exception as exc:  # bad settings: say so instead of a traceback
        typer.echo(f"error: cannot read the settings: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None


def _estimate_or_stop(
    settings: Any, rows: list[Any], source: Path, *, yes: bool, confirm_above: float
) -> None:
    """Print the judge's estimate; stop (exit 2) before a paid run above the threshold without --yes."""
    from veille.graders.batch import prompt_groups
    from veille.graders.estimate import estimate_judge
    from veille.models.pricing import PriceTable

    groups = [(g[0].prompt, g[0].reference, [r.response for r in g]) for g in prompt_groups(rows, source)]
    model = settings.role("judge").model
    estimate = estimate_judge(groups, model, PriceTable.load(settings.prices_file))
    paid = not provider(settings.role_provider("judge")).free
    cost = "unknown (unpriced model)" if estimate.cost_usd is None else f"~{estimate.cost_usd:.4f} $"
    typer.echo(
        f"judge estimate: {estimate.calls} call(s) to {model}"
        f"{'' if paid else ' (offline: free)'}, ~{estimate.input_tokens} input + "
        f"~{estimate.output_tokens} output tokens, {cost if paid else '0 $'}",
        err=True,
    )
    if paid and not yes and (estimate.cost_usd is None or estimate.cost_usd > confirm_above):
        typer.echo(
            f"error: this paid judge run is estimated above {confirm_above:.2f} $ (or unpriced); "
            "rerun with --yes to start it",
            err=True,
        )
        raise typer.Exit(2)


def _judge_client(settings: Any, started: datetime) -> tuple[str, Path, Any]:
    """The run id, the run folder (its calls.jsonl is the journal) and the judge's client."""
    from veille.backends import build_client
    from veille.run.folder import new_run_id

    run_id = new_run_id(started)
    run_dir = settings.runs_dir / run_id
    try:
        run_dir.mkdir(parents=True, exist_ok=False)
        return run_id, run_dir, build_client(settings, run_id=run_id, journal_path=run_dir / "calls.jsonl")
    except Exception as exc:  # no key, unwritable warehouse: say so instead of a traceback
        typer.echo(f"error: cannot build the judge's model client: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None


def _record(settings: Any, run_dir: Path, run_id: str, started: datetime, status: str, source: Path) -> None:
    """The grade run's calls into the warehouse (a failure to record is said, not raised)."""
    from veille.graders.journal_run import write_run_json
    from veille.warehouse import record_run_dir

    try:
        write_run_json(
            run_dir,
            run_id,
            started,
            status=status,
            backend=settings.role_provider("judge"),
            request_title=f"veille grade {source.name}",
            models={"judge": settings.role("judge").model},
        )
        record_run_dir(run_dir, settings.parquet_dir)
        typer.echo(f"judge calls recorded: run {run_id} in {settings.parquet_dir}", err=True)
    except Exception as exc:
        typer.echo(f"warning: the judge's calls were not recorded ({type(exc).__name__}: {exc})", err=True)


def _discard(run_dir: Path) -> None:
    import shutil

    shutil.rmtree(run_dir, ignore_errors=True)


def _progress(done: int, total: int) -> None:
    """One line per ~5 % of the prompt groups (stderr), so a long judge run shows it moves."""
    step = max(1, total // 20)
    if done == total or done % step == 0:
        typer.echo(f"graded {done}/{total} prompt group(s)", err=True)


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
