"""`veille server`: this checkout's Prefect server (API, scheduler, UI), as `make server` starts it.

Keyed by checkout and virtual environment (veille.ops.checkout): its database lives in
``<PREFECT_HOME>/veille-server/<key>``, a port another checkout's server already holds is refused, and
``--check`` tells `make deploy` / `make worker` whether the server they would use is this one.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

__all__ = ["server"]


def server(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of the API and UI.")] = 4200,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Start nothing: exit 0 when the server of PREFECT_API_URL (else of --port) is this "
            "checkout's, 1 otherwise.",
        ),
    ] = False,
) -> None:
    """Start this checkout's Prefect server in the foreground (`make server`), telemetry off, its UI's
    address in PREFECT_UI_URL (the failure notifications link the flow run there)."""
    from veille.ops.checkout import SERVER_KIND, keyed_home, keyed_path, server_facts, server_is_ours
    from veille.ops.server import LOOPBACK, api_url, prefect_command, server_env
    from veille.ops.shared_api import default_home

    prefect_home = default_home()
    client_host = LOOPBACK if host in ("0.0.0.0", "::", "") else host
    url = (os.environ.get("PREFECT_API_URL") if check else None) or api_url(port, client_host)
    facts = server_facts(url)
    mine = keyed_path(prefect_home, SERVER_KIND)
    if check:
        if facts is None:
            typer.echo(
                f"error: no Prefect server answers at {url}: start this checkout's with `make server`",
                err=True,
            )
            raise typer.Exit(1)
        if not server_is_ours(facts, prefect_home):
            typer.echo(
                f"error: the Prefect server at {url} is not this checkout's (its database is in "
                f"{facts.home}, this checkout's would be in {mine}): start this one's with `make server "
                "PREFECT_PORT=<free port>` and use the same PREFECT_PORT for deploy and worker",
                err=True,
            )
            raise typer.Exit(1)
        typer.echo(f"the Prefect server at {url} is this checkout's")
        return
    if facts is not None:
        if server_is_ours(facts, prefect_home):
            typer.echo(f"this checkout's Prefect server already runs at {url}")
            return
        typer.echo(
            f"error: port {port} is already served by another Prefect server (database in {facts.home}), "
            f"maybe another checkout's: choose another port, e.g. `make server PREFECT_PORT={port + 1}`",
            err=True,
        )
        raise typer.Exit(1)
    home = keyed_home(prefect_home, SERVER_KIND)
    env = server_env(port=port, home=home, host=host)
    typer.echo(f"this checkout's Prefect server: UI {env['PREFECT_UI_URL']}, API {env['PREFECT_API_URL']}")
    typer.echo(f"database and files in {home}")
    sys.stdout.flush()
    argv = prefect_command("server", "start", "--host", host, "--port", str(port), "--analytics-off")
    os.execve(argv[0], argv, env)  # the server in this process: Ctrl-C reaches it as before
