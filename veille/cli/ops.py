"""`veille` commands to operate the pipeline with Prefect: setup, serve, clean.

See docs/operations.md for the server + worker set-up these commands complement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from veille.providers import provider_names

__all__ = ["register"]


def _settings(warehouse: Path | None = None) -> Any:
    from veille.settings import Settings

    return Settings.from_params(warehouse=warehouse)


def setup(
    pool: Annotated[str, typer.Option(help="Name of the process work pool to create if missing.")] = "",
    limit: Annotated[
        int,
        typer.Option(help="Slots of the global concurrency limit on model calls (0: max_concurrent_calls)."),
    ] = 0,
    deployments: Annotated[
        Path,
        typer.Option(help="prefect.yaml whose deployments (watches) get a failure automation."),
    ] = Path("prefect.yaml"),
) -> None:
    """Create the process work pool, the model-call concurrency limit and, per deployment whose
    corpus's delivery.toml names [operators], an automation notifying them of a failed or crashed night."""
    from prefect.client.orchestration import get_client
    from prefect.settings import get_current_settings

    from veille.ops.limits import MODEL_CALL_LIMIT
    from veille.ops.setup import DEFAULT_POOL, ensure_model_call_limit, ensure_work_pool

    url = get_current_settings().api.url
    if not url:
        typer.echo(
            "error: no Prefect server configured: set PREFECT_API_URL (e.g. http://127.0.0.1:4200/api, "
            "printed by `make server`)",
            err=True,
        )
        raise typer.Exit(2)
    settings = _settings()
    slots = limit or settings.max_concurrent_calls
    pool_name = pool or DEFAULT_POOL
    with get_client(sync_client=True) as client:
        created_pool = ensure_work_pool(client, pool_name)
        created_limit = ensure_model_call_limit(client, slots)
    typer.echo(f"work pool {pool_name!r}: {'created' if created_pool else 'exists'}")
    typer.echo(
        f"global concurrency limit {MODEL_CALL_LIMIT!r} ({slots} slots): "
        f"{'created' if created_limit else 'exists'}"
    )
    _failure_automations(deployments, settings.corpus_dir)
    _warn_without_ui_url(url)


def _warn_without_ui_url(api_url: str) -> None:
    """The failure message links the flow run through the server's PREFECT_UI_URL: say when the
    server has none (the link would read « None »)."""
    from veille.ops.checkout import server_facts

    facts = server_facts(api_url)
    if facts is not None and facts.ui_url is None:
        typer.echo(
            "warning: the Prefect server has no PREFECT_UI_URL: failure messages would carry no link to "
            "the flow run; start it with `make server` or `veille server`, or set PREFECT_UI_URL in its "
            "environment",
            err=True,
        )


def _failure_automations(prefect_yaml: Path, default_corpus: Path) -> None:
    """One automation per watch of ``prefect_yaml`` (idempotent); channel URLs from the environment."""
    import os

    from prefect.client.orchestration import get_client

    from veille.delivery.config import DeliveryError, load_delivery
    from veille.ops.alerting import (
        automation_name,
        channel_urls,
        ensure_failure_automation,
        former_reader_blocks,
        remove_blocks,
        remove_failure_automation,
    )
    from veille.ops.watches import read_watches

    if not prefect_yaml.is_file():
        typer.echo(f"{prefect_yaml}: not found, no failure automation created")
        return
    try:
        watches = read_watches(prefect_yaml, default_corpus)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for watch in watches:
        try:
            config = load_delivery(watch.corpus_dir)
        except DeliveryError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if config is None or config.operators is None:
            why = "no delivery.toml" if config is None else "no [operators] in the delivery.toml of"
            with get_client(sync_client=True) as client:  # an older setup's automation told the readers
                removed = remove_failure_automation(client, watch.deployment)
                if config is not None:
                    remove_blocks(client, former_reader_blocks(watch.deployment, config))
            typer.echo(
                f"{watch.deployment}: {why} {watch.corpus_dir}, failures not notified"
                + (" (its former automation, which notified the readers, is deleted)" if removed else "")
            )
            continue
        channels, missing = channel_urls(watch.deployment, config, os.environ)
        for variable in missing:
            typer.echo(
                f"{watch.deployment}: {variable} is not set here; that channel is not notified", err=True
            )
        with get_client(sync_client=True) as client:
            status = ensure_failure_automation(client, watch.deployment, channels)
            remove_blocks(client, former_reader_blocks(watch.deployment, config))
        typer.echo(f"automation {automation_name(watch.deployment)!r} ({len(channels)} channel(s)): {status}")


def serve(
    name: Annotated[str, typer.Option(help="Deployment name.")] = "veille-served",
    cron: Annotated[str, typer.Option(help="Cron expression, read in --timezone.")] = "0 2 * * *",
    timezone: Annotated[str, typer.Option(help="IANA time zone of the cron expression.")] = "Europe/Paris",
    corpus: Annotated[Path | None, typer.Option(help="Corpus directory.")] = None,
    backend: Annotated[
        str | None, typer.Option(help="a provider: " + ", ".join(provider_names()) + " (default: settings).")
    ] = None,
    start_server: Annotated[
        bool,
        typer.Option(
            "--start-server",
            help="Start a Prefect server (API, scheduler, UI) on 127.0.0.1 as a child of this process.",
        ),
    ] = False,
    port: Annotated[int, typer.Option(help="Port of the server started by --start-server.")] = 4200,
) -> None:
    """Serve the veille flow on a timezone-aware cron schedule from this one process (no worker, no pool).

    Needs a Prefect server for the scheduler: the one PREFECT_API_URL points at (`make server`),
    or one started here with --start-server. Ctrl-C stops serving and pauses the schedule.
    """
    from prefect.settings import get_current_settings
    from prefect.types.entrypoint import EntrypointType

    from veille.flows.veille import veille_flow
    from veille.ops.schedule import nightly_schedule

    try:  # validates the cron expression and the time zone before anything starts
        schedule = nightly_schedule(cron, timezone)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    # Module path: loaded as the script "flows/veille.py", the flow file would shadow the veille package.
    serve_options: dict[str, Any] = {
        "name": name,
        "schedules": [schedule],
        # The UI's schedule card hides the time zone: the description says it.
        "description": f"Nightly technology-watch dossier; schedule: cron {cron!r} in {timezone}.",
        "parameters": _serve_parameters(corpus, backend),
        "entrypoint_type": EntrypointType.MODULE_PATH,
    }
    url = get_current_settings().api.url
    if url and not start_server:
        typer.echo(f"serving {name!r} on {url}: cron {cron!r} in {timezone}")
        veille_flow.serve(**serve_options)
        return
    if not start_server:
        # An ephemeral API has no scheduler: the schedule would never fire.
        typer.echo(
            "error: no Prefect server configured. Run `make server` and set PREFECT_API_URL, "
            "or pass --start-server.",
            err=True,
        )
        raise typer.Exit(2)
    _serve_with_own_server(port, f"serving {name!r}: cron {cron!r} in {timezone}", serve_options)


def _serve_parameters(corpus: Path | None, backend: str | None) -> dict[str, Any]:
    """The deployment's flow parameters, checked here (one-line errors, exit code 2)."""
    parameters: dict[str, Any] = {}
    if corpus is not None:
        if not corpus.is_dir():
            typer.echo(f"error: --corpus {corpus}: not a directory", err=True)
            raise typer.Exit(2)
        parameters["corpus"] = str(corpus.resolve())
    if backend is not None:
        if backend not in provider_names():
            typer.echo(
                f"error: --backend {backend!r}: expected one of {', '.join(provider_names())}", err=True
            )
            raise typer.Exit(2)
        parameters["backend"] = backend
    return parameters


def _serve_with_own_server(port: int, banner: str, serve_options: dict[str, Any]) -> None:
    """Start a Prefect server (API, scheduler, UI) on loopback as a child, serve, then stop it."""
    from prefect.settings import PREFECT_API_URL, PREFECT_HOME, temporary_settings

    from veille.flows.veille import veille_flow
    from veille.ops.checkout import SERVER_KIND, keyed_home
    from veille.ops.server import (
        LOOPBACK,
        api_url,
        server_env,
        start_prefect_process,
        stop_process,
        wait_healthy,
    )

    home = keyed_home(Path(PREFECT_HOME.value()), SERVER_KIND)  # this checkout's, as `veille server`
    log_path = home / "veille-serve-server.log"
    server = start_prefect_process(
        ["server", "start", "--host", LOOPBACK, "--port", str(port), "--analytics-off"],
        env=server_env(port=port, home=home),
        log_path=log_path,
    )
    try:
        wait_healthy(api_url(port), proc=server)
        typer.echo(f"Prefect server and UI on http://{LOOPBACK}:{port} (log: {log_path})")
        typer.echo(banner)
        with temporary_settings(updates={PREFECT_API_URL: api_url(port)}):
            veille_flow.serve(**serve_options)
    finally:
        stop_process(server)


def clean(
    responses: Annotated[
        bool, typer.Option("--responses", help="Also delete the model response cache (costs calls).")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be deleted.")] = False,
    warehouse: Annotated[Path | None, typer.Option(help="Warehouse directory.")] = None,
) -> None:
    """Delete persisted Prefect task results and cache records (and optionally the response cache)."""
    from veille.ops.clean import clean as remove_targets
    from veille.ops.clean import clean_targets

    targets = clean_targets(_settings(warehouse), responses=responses)
    removed = remove_targets(targets, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    for target in targets:
        state = verb if target.path in removed else "absent"
        typer.echo(f"{state}: {target.path} ({target.what})")


def shared_api(
    stop: Annotated[bool, typer.Option("--stop", help="Stop it now (a run using it then fails).")] = False,
) -> None:
    """Show (or stop) the background Prefect API that `veille run` shares between runs."""
    from veille.ops.shared_api import read_state, shared_home, stop_shared_api, usable

    home = shared_home()  # this checkout's and virtual environment's (veille.ops.checkout)
    if stop:
        stopped = stop_shared_api(home)
        typer.echo(f"stopped the shared Prefect API on {stopped.url}" if stopped else "no shared Prefect API")
        return
    state = read_state(home)
    if state is None or not usable(state):
        typer.echo(f"no shared Prefect API for PREFECT_HOME {home}")
        raise typer.Exit(1)
    typer.echo(
        f"shared Prefect API on {state.url} (keeper pid {state.keeper_pid}, server pid "
        f"{state.server_pid}, Prefect {state.prefect_version}, started {state.started_utc}, "
        f"stops after {state.idle_s:.0f} s without a run)"
    )


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    from veille.cli.server import server

    app.command("server")(server)
    app.command("shared-api")(shared_api)
    app.command("setup")(setup)
    app.command("serve")(serve)
    app.command("clean")(clean)
