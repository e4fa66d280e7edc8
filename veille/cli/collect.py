"""`veille collect`: fetch the corpus's watched feeds and pages (``sources.toml``) into ``docs/``."""

from __future__ import annotations

import typer

from veille.cli.run import CorpusOption

__all__ = ["collect", "register"]


def collect(corpus: CorpusOption = None) -> None:
    """Collect the feeds and pages of <corpus>/sources.toml as documents (a failing source is an alert).

    Exit code 0 when the night went on (even with failing sources), 2 when sources.toml is missing or
    invalid, 1 when another collect of the corpus (a nightly run's) is still running after 10 minutes."""
    from veille.collect import collect_corpus, sources_file
    from veille.collect.run import CollectBusyError
    from veille.collect.sources import SourcesError
    from veille.settings import Settings

    settings = Settings.from_params(corpus=corpus)
    if not sources_file(settings.corpus_dir).exists():
        typer.echo(
            f"error: {sources_file(settings.corpus_dir)}: no sources file (see docs/corpus-format.md)",
            err=True,
        )
        raise typer.Exit(2)
    try:
        report = collect_corpus(settings.corpus_dir, max_doc_bytes=settings.max_doc_bytes)
    except SourcesError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except CollectBusyError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for alert in report.alerts:
        typer.echo(f"{alert.severity}: {alert.code}: {alert.message}", err=True)
    typer.echo(f"collect: {report.note()}")
    for doc_id in report.written:
        typer.echo(f"  {doc_id}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("collect")(collect)
