"""The ``veille`` command line. Each command group lives in its own module with ``register(app)``."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from veille.cli.help import VeilleGroup, package_version
from veille.secrets import scrub_text

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
    cls=VeilleGroup,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every command
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"veille {package_version()}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the package version and exit."
        ),
    ] = False,
) -> None:
    """Cited, critic-checked technology-watch dossiers from a document corpus."""


def _register_all() -> None:
    from veille.cli import collect, folder, grade, ops, run, warehouse

    for module in (run, folder, collect, warehouse, grade, ops):
        module.register(app)


def _refused_by_server(exc: BaseException) -> str | None:
    """A one-line message when a Prefect server refused us (401/403: authentication), else None."""
    from prefect.exceptions import PrefectHTTPStatusError

    if not isinstance(exc, PrefectHTTPStatusError) or exc.response.status_code not in (401, 403):
        return None
    url = str(exc.request.url).split("/api/", 1)[0]  # the server, not the endpoint
    return (
        f"the Prefect server at {url} refused the request ({exc.response.status_code} "
        f"{exc.response.reason_phrase}): it requires authentication. Set PREFECT_API_AUTH_STRING "
        "('user:password', the server's PREFECT_SERVER_API_AUTH_STRING); see docs/operations.md, "
        "'Exposing the server'."
    )


def _environment_error(exc: BaseException) -> str | None:
    from veille.oserrors import environment_error

    return environment_error(exc)


def main() -> None:
    _telemetry_off()
    _register_all()
    try:
        app()
    except Exception as exc:  # an operator's setting or the machine, not a bug: no traceback
        message = _refused_by_server(exc) or _environment_error(exc)
        if message is None:
            raise
        typer.echo(f"error: {scrub_text(message)}", err=True)
        raise SystemExit(1) from None
