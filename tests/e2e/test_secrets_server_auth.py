"""Access to the Prefect server, end to end (docs/operations.md, "Exposing the server").

A real `prefect server start` launched the way `make server` / `veille serve --start-server` do, with
Prefect's basic authentication on (PREFECT_SERVER_API_AUTH_STRING): it listens on 127.0.0.1 only; the
API refuses requests without the credentials (health probes excepted); `veille setup` and `veille run`
without PREFECT_API_AUTH_STRING stop with a one-line error (no traceback); with it, they work; the
password appears in no output, file or stored log.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import PROJECT_ROOT, SERVER_START_TIMEOUT_S
from veille.ops import server as ops_server

pytestmark = [pytest.mark.process, pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]

USER = "veille"
PASSWORD = "CANARY-basic-auth-5d1e"  # also a canary: it must not be echoed anywhere
AUTH_STRING = f"{USER}:{PASSWORD}"


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket in LISTEN state on ``port`` (Linux /proc/net/tcp and tcp6)."""
    found: set[str] = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, state = fields[1], fields[3]
            host_hex, port_hex = address.split(":")
            if int(port_hex, 16) != port or state != "0A":  # 0A = LISTEN
                continue
            raw = bytes.fromhex(host_hex)
            # /proc prints each 32-bit word in host (little-endian) order.
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            found.add(socket.inet_ntop(family, raw))
    return found


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("auth-server")
    home = base / "home"
    home.mkdir()
    port = ops_server.free_port()
    env = ops_server.server_env(port=port, home=home)
    env.pop("PREFECT_API_AUTH_STRING", None)
    server_env = {**env, "PREFECT_SERVER_API_AUTH_STRING": AUTH_STRING}
    log_path = base / "server.log"
    # The same command line as `veille serve --start-server` and `make server`.
    proc = ops_server.start_prefect_process(
        ["server", "start", "--host", ops_server.LOOPBACK, "--port", str(port), "--analytics-off"],
        env=server_env,
        log_path=log_path,
    )
    try:
        try:
            ops_server.wait_healthy(ops_server.api_url(port), timeout_s=SERVER_START_TIMEOUT_S, proc=proc)
        except (TimeoutError, RuntimeError) as exc:
            raise AssertionError(f"{exc}\n{log_path.read_text(errors='replace')[-3000:]}") from exc
        yield {"port": port, "env": env, "base": base, "log_path": log_path}
    finally:
        ops_server.stop_process(proc, grace_s=30)


def _veille(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("veille")
    return subprocess.run(
        [str(exe), *args],
        env=env,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_server_listens_on_loopback_and_requires_the_password(
    auth_server: dict[str, Any], tmp_path: Path, reliability: Any
) -> None:
    port = auth_server["port"]
    api = ops_server.api_url(port)

    # Bound to 127.0.0.1 only: nothing listens on another address of this machine for that port.
    addresses = _listening_addresses(port)
    assert addresses == {"127.0.0.1"}, addresses

    # The API refuses anonymous and wrong credentials; probes stay open; the UI knows it must ask.
    assert httpx.post(f"{api}/flows/filter", json={}, timeout=30).status_code == 401
    assert httpx.post(f"{api}/flows/filter", json={}, auth=(USER, "wrong"), timeout=30).status_code == 401
    assert httpx.post(f"{api}/flows/filter", json={}, auth=(USER, PASSWORD), timeout=30).status_code == 200
    assert httpx.get(f"{api}/health", timeout=30).status_code == 200
    assert httpx.get(f"{api}/ready", timeout=30).status_code == 200
    ui_settings = httpx.get(f"http://{ops_server.LOOPBACK}:{port}/ui-settings", timeout=30).json()
    assert ui_settings["auth"] == "BASIC" and ui_settings["csrf_enabled"] is False  # as the doc says

    # Clients without the password: one clear line, exit code 1, no traceback.
    warehouse = tmp_path / "warehouse"
    corpus = PROJECT_ROOT / "corpus"  # the offline engine plans from the bundled corpus's request
    anonymous = {**auth_server["env"], "VEILLE_WAREHOUSE_DIR": str(warehouse)}
    outputs: list[str] = []
    for args in (("setup",), ("run", "--backend", "offline", "--corpus", str(corpus))):
        result = _veille(*args, env=anonymous)
        outputs += [result.stdout, result.stderr]
        assert result.returncode == 1, (args, result.stderr[-3000:])
        assert "Traceback" not in result.stderr, result.stderr[-3000:]
        assert "refused the request (401 Unauthorized)" in result.stderr
        assert "PREFECT_API_AUTH_STRING" in result.stderr

    # With the password, the same commands work, and a run is recorded.
    authenticated = {**anonymous, "PREFECT_API_AUTH_STRING": AUTH_STRING}
    setup = _veille("setup", env=authenticated)
    assert setup.returncode == 0, setup.stderr[-3000:]
    run = _veille("run", "--backend", "offline", "--corpus", str(corpus), env=authenticated)
    assert run.returncode == 0, run.stderr[-3000:]
    outputs += [setup.stdout, setup.stderr, run.stdout, run.stderr]
    run_dirs = list((warehouse / "runs").iterdir())
    assert len(run_dirs) == 1 and (run_dirs[0] / "report.md").is_file()

    # The password is a secret too: not in any output, warehouse file, or the server's stored logs.
    assert not [o for o in outputs if PASSWORD in o]
    leaked = [str(p) for p in warehouse.rglob("*") if p.is_file() and PASSWORD.encode() in p.read_bytes()]
    assert leaked == []
    logs = httpx.post(f"{api}/logs/filter", json={"limit": 200}, auth=(USER, PASSWORD), timeout=30)
    assert logs.status_code == 200 and logs.json(), "no stored log to check"
    assert PASSWORD not in logs.text
    assert PASSWORD not in auth_server["log_path"].read_text(errors="replace")
    reliability.record(
        "Prefect server exposed with basic auth (PREFECT_SERVER_API_AUTH_STRING); clients without it",
        "listens on 127.0.0.1 unless told otherwise; 401 without credentials (health open); veille "
        "commands stop with one line naming PREFECT_API_AUTH_STRING; work with it; password never echoed",
        f"LISTEN on {sorted(addresses)} only; 401 anonymous / wrong password, 200 with it, /health 200; "
        "veille setup + run: exit 1 without a traceback, then exit 0 and a recorded run; password in 0 "
        "outputs, files or stored logs",
    )
