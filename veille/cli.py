"""The ``veille`` command line. Each command group lives in its own module with ``register(app)``."""

from __future__ import annotations

import os

import typer

__all__ = ["app", "main"]


def _telemetry_off() -> None:
    # Every process the project starts runs with Prefect telemetry off.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT", "false")


app = typer.Typer(
    name="veille",
    help="Cited, critic-checked technology-watch dossiers from a document corpus.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_all() -> None:
    from veille import cli_grade, cli_ops, cli_run, cli_warehouse

    for module in (cli_run, cli_warehouse, cli_grade, cli_ops):
        module.register(app)


def main() -> None:
    _telemetry_off()
    _register_all()
    app()
