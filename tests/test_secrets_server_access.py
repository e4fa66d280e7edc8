"""The Prefect server the project starts binds to 127.0.0.1 unless told otherwise (fast checks; the
real server is checked by tests/test_operator_server.py), and a refused request is one line."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from veille import cli
from veille.cli import ops as cli_ops
from veille.ops import server

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _make_dry_run(target: str, *overrides: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    result = subprocess.run(
        ["make", "-n", "-s", target, *overrides],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_server_binds_loopback_unless_told_otherwise() -> None:
    default = _make_dry_run("server")
    assert "veille server --host 127.0.0.1 --port 4200" in default
    assert "0.0.0.0" not in default
    exposed = _make_dry_run("server", "PREFECT_HOST=0.0.0.0", "PREFECT_PORT=4300")
    assert "veille server --host 0.0.0.0 --port 4300" in exposed
    # Workers and deployments talk to the loopback API by default, after checking it is this
    # checkout's server (one checkout, one server).
    worker = _make_dry_run("worker")
    assert "PREFECT_API_URL=http://127.0.0.1:4200/api" in worker
    assert "veille server --check" in worker


def _exec_of_veille_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str) -> dict[str, Any]:
    """What `veille server` would exec (the Prefect server command and its environment)."""
    import typer

    from veille.ops.server import free_port

    execed: dict[str, Any] = {}

    def fake_exec(path: str, argv: list[str], env: dict[str, str]) -> None:
        execed.update(argv=list(argv), env=dict(env))

    monkeypatch.setattr(os, "execve", fake_exec)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    for key in ("PREFECT_API_URL", "PREFECT_UI_URL"):
        monkeypatch.delenv(key, raising=False)
    app = typer.Typer()
    cli_ops.register(app)
    port = str(free_port())  # nothing answers there: no other server to refuse
    result = CliRunner().invoke(app, ["server", "--port", port, *args])
    assert result.exit_code == 0, result.output
    execed["port"] = port
    return execed


def test_veille_server_binds_loopback_in_this_checkouts_folder_with_its_ui_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from veille.ops.checkout import SERVER_KIND, keyed_path

    execed = _exec_of_veille_server(monkeypatch, tmp_path)
    argv, env, port = execed["argv"], execed["env"], execed["port"]
    assert argv[-6:] == ["start", "--host", "127.0.0.1", "--port", port, "--analytics-off"]
    assert env["PREFECT_SERVER_API_HOST"] == "127.0.0.1"
    assert env["PREFECT_UI_URL"] == f"http://127.0.0.1:{port}"  # the failure message's link
    assert env["PREFECT_UI_API_URL"] == f"http://127.0.0.1:{port}/api"
    assert env["PREFECT_HOME"] == str(keyed_path(tmp_path, SERVER_KIND))  # not ~/.prefect itself
    assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"


def test_veille_serve_starts_its_server_on_loopback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    started: dict[str, Any] = {}

    def fake_start(args: list[str], *, env: dict[str, str], log_path: Path, cwd: Path | None = None) -> Any:
        started.update(args=list(args), env=dict(env))
        return object()

    def stop_here(url: str, **_: Any) -> float:
        raise RuntimeError("stop before serving")  # enough: the server command line is known

    monkeypatch.setattr(server, "start_prefect_process", fake_start)
    monkeypatch.setattr(server, "wait_healthy", stop_here)
    monkeypatch.setattr(server, "stop_process", lambda proc, **_: 0)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    import typer

    app = typer.Typer()
    cli_ops.register(app)
    result = CliRunner().invoke(app, ["serve", "--start-server", "--port", "4321"])

    assert isinstance(result.exception, RuntimeError), result.output
    args = started["args"]
    assert args[:2] == ["server", "start"]
    assert args[args.index("--host") + 1] == "127.0.0.1" and args[args.index("--port") + 1] == "4321"
    assert started["env"]["PREFECT_SERVER_API_HOST"] == "127.0.0.1"


def test_a_refused_request_is_one_line_without_the_password() -> None:
    from prefect.exceptions import PrefectHTTPStatusError

    basic = base64.b64encode(b"u:CANARY-pw").decode()
    request = httpx.Request(
        "POST", "http://127.0.0.1:4200/api/work_pools/filter", headers={"Authorization": f"Basic {basic}"}
    )
    response = httpx.Response(401, request=request, json={"exception_message": "Unauthorized"})
    error = PrefectHTTPStatusError.from_httpx_error(
        httpx.HTTPStatusError("401", request=request, response=response)
    )
    message = cli._refused_by_server(error)
    assert message is not None and "\n" not in message
    assert message.startswith(
        "the Prefect server at http://127.0.0.1:4200 refused the request (401 Unauthorized)"
    )
    assert "PREFECT_API_AUTH_STRING" in message and "CANARY-pw" not in message
    other = httpx.Response(500, request=request)
    assert (
        cli._refused_by_server(
            PrefectHTTPStatusError.from_httpx_error(
                httpx.HTTPStatusError("500", request=request, response=other)
            )
        )
        is None
    )
    assert cli._refused_by_server(ValueError("x")) is None
