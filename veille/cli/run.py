"""`veille` commands: run, ingest, catalogue.

Heavy imports (Prefect, DuckDB) happen inside the commands so that ``veille --help`` stays instant.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from veille.providers import UnknownProviderError, backend_help, check_backend

if TYPE_CHECKING:
    from rich.console import Console

    from veille.settings import Settings
    from veille.store.ingest import IngestReport
    from veille.store.readers import Catalogue

__all__ = ["print_ingest_summary", "quiet_corpus_tracebacks", "register", "request_setting"]

T = TypeVar("T")

CorpusOption = Annotated[
    Path | None,
    typer.Option(
        "--corpus",
        help="Corpus folder: a request (request.md or demande.md) and the documents (Markdown, text, "
        "HTML, PDF, DOCX) in docs/ or at its root.",
    ),
]
StrictOption = Annotated[
    bool,
    typer.Option("--strict", help="Fail the run on the first invalid document instead of skipping it."),
]
RequestOption = Annotated[
    str | None,
    typer.Option(
        "--request",
        help="The request: a file (any name, front matter optional) or its text in quotes. "
        "Default: request.md or demande.md in the corpus folder.",
    ),
]
WarehouseOption = Annotated[
    Path | None,
    typer.Option("--warehouse", help="Warehouse directory (DuckDB file, runs)."),
]


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _environment_guarded(action: Callable[[], T], database: Path) -> T:
    """:func:`_guarded`, and an environment error (read-only folder, a file where a folder should be,
    disk full, a database file that is not one) becomes one line naming the path, exit code 1."""
    import duckdb

    try:
        return _guarded(action)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else f" ({database})"
        raise _fail(f"{exc.strerror or exc}{where}", 1) from None
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _fail(f"corpus database {database}: {first[:300]}", 1) from None


def _guarded(action: Callable[[], T]) -> T:
    """Run ``action``; bad input becomes a one-line message and a non-zero exit code, never a traceback."""
    from pydantic import ValidationError

    from veille.corpus.errors import CorpusError

    try:
        return action()
    except CorpusError as exc:
        raise _fail(str(exc), 2) from None
    except FileNotFoundError as exc:
        raise _fail(str(exc), 1) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise _fail(f"invalid settings: {where}: {first['msg']}", 2) from None


class _DropCorpusTraceback(logging.Filter):
    """Prefect logs a failed task/flow with its traceback; for bad input the one-line message is enough."""

    def filter(self, record: logging.LogRecord) -> bool:
        from veille.corpus.errors import CorpusError

        if record.exc_info and isinstance(record.exc_info[1], CorpusError):
            record.exc_info = None
            record.exc_text = None
        return True


@contextmanager
def quiet_corpus_tracebacks() -> Iterator[None]:
    """While active, log records carrying a CorpusError lose their traceback (root handlers)."""
    handlers = list(logging.getLogger().handlers)
    filt = _DropCorpusTraceback()
    for handler in handlers:
        handler.addFilter(filt)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(filt)


def print_ingest_summary(
    report: IngestReport,
    listing: Catalogue | None,
    console: Console | None = None,
    *,
    alerts_below: bool = False,
) -> None:
    """Counts, alerts and (if given) the catalogue, for people. Reused by the full pipeline's `veille run`,
    whose own alert list holds the ingest alerts: with ``alerts_below`` no alert line is printed here (not
    « Alerts: none » above « Alertes (6…) », nor the same alert twice)."""
    from rich.console import Console
    from rich.markup import escape  # the user's folder names are data: « veille [old] » is no style

    out = console or Console()
    # French, like the run's summary below it; counts only: no alert line when the run lists them.
    out.print(
        f"[bold]Ingestion[/bold] de {escape(str(report.corpus_dir))} dans {escape(str(report.database))} "
        f"({report.duration_s:.2f} s)",
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        f"  {report.ingested} ingéré(s) ({report.added} ajouté(s), {report.updated} mis à jour), "
        f"{report.unchanged} inchangé(s), {report.removed} retiré(s), {report.skipped} invalide(s) "
        f"ignoré(s) ; [bold]{report.documents}[/bold] documents au catalogue",
        highlight=False,
        soft_wrap=True,
    )
    if alerts_below:
        pass  # « Alertes (n, regroupées par code) » of the run holds them: printed once, counted once
    elif report.alerts:
        from veille.alertlines import alert_lines

        out.print(f"[bold]Alertes[/bold] ({len(report.alerts)}, regroupées par code) :")
        for line in alert_lines(report.alerts):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
    else:
        out.print("[bold]Alertes[/bold] : aucune")
    if listing is not None:
        out.print(
            f"[bold]Catalogue[/bold] ({len(listing.entries)} documents, ~{listing.token_estimate} tokens, "
            "estimation)"
        )
        out.print(listing.text, markup=False, highlight=False, soft_wrap=True)


def request_setting(value: str | None) -> str | None:
    """``--request``'s value as the settings keep it: a file as an absolute path, a text as written."""
    from veille.corpus.layout import given_request

    return None if value is None else str(_guarded(lambda: given_request(value)))


def _run_ingest_flow(settings: Settings) -> IngestReport:
    from veille.flows.ingest import ingest_flow

    with quiet_corpus_tracebacks():
        return ingest_flow(settings=settings)


def _runnable(settings: Settings) -> None:
    """A folder that cannot run (no request, no document) stops here: one line, no night recorded."""
    from veille.corpus.errors import CorpusError
    from veille.store.files import check_runnable

    try:
        check_runnable(settings.corpus_dir, settings.request, settings.warehouse_dir)
    except CorpusError as exc:
        typer.echo(f"error: {exc}", err=True)
        typer.echo(
            f"No night recorded. `veille check --corpus {settings.corpus_dir}` lists every problem of the "
            "folder at once, each with its fix.",
            err=True,
        )
        raise typer.Exit(2) from None


def run(
    corpus: CorpusOption = None,
    request: RequestOption = None,
    strict: StrictOption = False,
    warehouse: WarehouseOption = None,
    backend: Annotated[
        str | None,
        typer.Option("--backend", help=backend_help()),
    ] = None,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache", help="Recompute every step: no response cache, no persisted task results."
        ),
    ] = False,
    max_rounds: Annotated[
        int | None, typer.Option("--max-rounds", min=1, help="Critic evaluations at most (review loop).")
    ] = None,
    show_catalogue: Annotated[
        bool,
        typer.Option(
            "--catalogue", help="Also print the catalogue (one line per document; `veille catalogue` too)."
        ),
    ] = False,
    web: Annotated[
        bool,
        typer.Option(
            "--web",
            help="Also search the web for each sub-task (Gemini + Google Search grounding, within "
            "web_budget calls; offline: corpus only, with a warning).",
        ),
    ] = False,
) -> None:
    """Run the veille flow on a corpus and print a summary: sub-tasks, exclusions, alerts, review, cost, report."""
    # Long mostly by its option declarations above; the body is build settings, run, print.

    try:
        check_backend(backend)
    except UnknownProviderError as exc:
        raise _fail(str(exc), 2) from None
    from veille.settings import Settings

    settings = _guarded(  # built once, here: bad options fail early; the flow uses these settings
        lambda: Settings.from_params(
            corpus=corpus,
            warehouse=warehouse,
            backend=backend,
            strict=strict,
            max_rounds=max_rounds,
            use_cache=False if no_cache else None,
            web=web,
            request=request_setting(request),
        )
    )
    _runnable(settings)
    from veille.warehouse.place import UnusableWarehouseError, check_warehouse

    try:  # before any server or flow starts: a bad path is one line, not a failed flow's traceback
        check_warehouse(settings.warehouse_dir, settings.database)
    except UnusableWarehouseError as exc:
        raise _fail(str(exc), 1) from None
    from veille.ops.shared_api import early_lease, prefect_api

    # Before Prefect is imported (~2 s): a server still to start starts meanwhile.
    try:
        shared = early_lease(settings.prefect_server, settings.prefect_server_idle_s)
    except OSError as exc:  # e.g. PREFECT_HOME not writable: the temporary API still works
        typer.echo(f"warning: shared Prefect API unavailable ({exc}); using a temporary one", err=True)
        shared = None
    from veille.cli.progress import showing_progress
    from veille.corpus.errors import CorpusError
    from veille.flows.veille import veille_flow
    from veille.flows.warmup import start_warming
    from veille.run.folder import run_folder_of
    from veille.run.summary import format_summary, ingest_alerts_recorded, load_ingest_report
    from veille.store.readers import read_catalogue

    warming = start_warming(settings)  # while a first night waits for its API (veille/flows/warmup.py)
    with prefect_api(shared), quiet_corpus_tracebacks(), showing_progress():
        warming.join()
        state = veille_flow(  # the flow builds the same settings from its parameters
            corpus=str(settings.corpus_dir),
            warehouse=str(settings.warehouse_dir),
            backend=backend,
            strict=strict,
            max_rounds=max_rounds,
            use_cache=False if no_cache else None,
            web=web,
            request_source=settings.request,
            return_state=True,
        )
    result = state.result(raise_on_failure=False)
    error = result if isinstance(result, BaseException) else None
    run_dir = run_folder_of(error) if error is not None else Path(str(result))
    if run_dir is not None and run_dir.is_dir():
        ingested = load_ingest_report(run_dir)
        if ingested is not None:
            listing = _guarded(lambda: read_catalogue(settings.database)) if show_catalogue else None
            print_ingest_summary(ingested, listing, alerts_below=ingest_alerts_recorded(run_dir, ingested))
        typer.echo(format_summary(run_dir))
    if error is not None:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2 if isinstance(error, CorpusError) else 1)
    if not state.is_completed():
        typer.echo(f"run ended {state.type.value}: {state.message}", err=True)
        raise typer.Exit(1)


def ingest(
    corpus: CorpusOption = None,
    request: RequestOption = None,
    strict: StrictOption = False,
    warehouse: WarehouseOption = None,
) -> None:
    """Ingest the corpus into DuckDB (incremental, one transaction), without Prefect orchestration."""
    from veille.cli.progress import showing_progress
    from veille.settings import Settings
    from veille.store.ingest import ingest_corpus

    given = request_setting(request)
    settings = _guarded(
        lambda: Settings.from_params(corpus=corpus, strict=strict, warehouse=warehouse, request=given)
    )
    with showing_progress():
        report = _environment_guarded(
            lambda: ingest_corpus(
                settings.corpus_dir,
                settings.database,
                strict=settings.strict,
                max_doc_bytes=settings.max_doc_bytes,
                file_clock=settings.date_from_file_clock,
                request=settings.request,
            ),
            settings.database,
        )
    print_ingest_summary(report, None)


def catalogue(
    warehouse: WarehouseOption = None,
    summaries: Annotated[bool, typer.Option("--summaries", help="Append each document's summary.")] = False,
) -> None:
    """Print the catalogue (one line per valid document, ordered by id) from the last ingestion."""
    from rich.console import Console

    from veille.settings import Settings
    from veille.store.readers import read_catalogue

    settings = _guarded(lambda: Settings.from_params(warehouse=warehouse))
    listing = _environment_guarded(
        lambda: read_catalogue(settings.database, with_summaries=summaries), settings.database
    )
    console = Console()
    console.print(listing.text, markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"{len(listing.entries)} documents, ~{listing.token_estimate} tokens (estimated)", style="dim"
    )


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("run")(run)
    app.command("ingest")(ingest)
    app.command("catalogue")(catalogue)
