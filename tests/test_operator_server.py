"""A real `veille server` (as `make server` starts it), with Prefect's basic authentication on
(PREFECT_SERVER_API_AUTH_STRING; docs/operations.md, "Exposing the server"): a failed night's
automation reaches only the operators, in French, with the flow run's link that answers 200 and no path
of the run; a second checkout (or another PREFECT_HOME) is refused the first one's server (issue 39,
items 3 and 5); the server listens on 127.0.0.1 only, the API refuses requests without the credentials
(health probes excepted), `veille setup` and `veille run` without PREFECT_API_AUTH_STRING stop with a
one-line error (no traceback) and work with it, and the password appears in no output, file or stored
log. One server for the module: every test here only needs a server's API (issue 40, item 5)."""

from __future__ import annotations

import email.header
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_httpserver import HTTPServer

from testkit.flowkit import write_corpus
from tests.mailkit import smtp_server
from veille.ops.checkout import SERVER_KIND, keyed_path
from veille.ops.server import api_url, free_port, stop_process, wait_healthy

pytestmark = [pytest.mark.process, pytest.mark.slow, pytest.mark.timeout(900)]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
VEILLE = str(Path(sys.executable).with_name("veille"))
# A failed step's message may quote the worker's paths (the run folder): it must not travel.
RUN_PATH = "/srv/veille-secret/warehouse/runs/20261207T020000"
DELIVERY_TOML = """[email]
to = ["lectrice@example.org", "directeur@example.org"]

[[chat]]
name = "lecteurs"
url_env = "VEILLE_CHAT_READERS"

[operators]
to = ["astreinte@example.org"]

[[operators.chat]]
name = "astreinte"
url_env = "VEILLE_CHAT_OPS"
"""
USER = "veille"
PASSWORD = "CANARY-basic-auth-5d1e"  # also a canary: it must not be echoed anywhere
AUTH_STRING = f"{USER}:{PASSWORD}"


@dataclass(frozen=True)
class Server:
    url: str  # the API's
    ui: str
    home: Path  # PREFECT_HOME
    log: Path


def _env(home: Path, **extra: str) -> dict[str, str]:
    """A client's environment: the server's credentials unless ``extra`` says otherwise."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VEILLE_", "PREFECT_"))}
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        PREFECT_API_AUTH_STRING=AUTH_STRING,
    )
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("prefect-home")
    port = free_port()
    log_path = home / "server.log"
    log = log_path.open("wb")
    env = _env(home, PREFECT_SERVER_API_AUTH_STRING=AUTH_STRING)
    env.pop("PREFECT_API_AUTH_STRING")  # the server's own setting only
    proc = subprocess.Popen(
        [VEILLE, "server", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_healthy(api_url(port), timeout_s=300, proc=proc)  # type: ignore[arg-type]
        yield Server(url=api_url(port), ui=f"http://127.0.0.1:{port}", home=home, log=log_path)
    finally:
        stop_process(proc)  # type: ignore[arg-type]
        log.close()


def _veille(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([VEILLE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _fail_a_night(server: Server, deployment: str) -> str:
    """A flow run of ``deployment`` ending Failed with the message a partial night gives; its id."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_AUTH_STRING, PREFECT_API_URL, temporary_settings
    from prefect.states import Failed, Running

    settings = {PREFECT_API_URL: server.url, PREFECT_API_AUTH_STRING: AUTH_STRING}
    with temporary_settings(updates=settings), get_client(sync_client=True) as client:
        flow_id = client.create_flow_from_name("veille")
        deployment_id = client.create_deployment(flow_id=flow_id, name=deployment)
        run = client.create_flow_run_from_deployment(deployment_id)
        client.set_flow_run_state(run.id, Running(), force=True)
        client.set_flow_run_state(
            run.id, Failed(message=f"1 branch(es) failed: st-2; partial report in {RUN_PATH}"), force=True
        )
    return str(run.id)


def _text(message: Message) -> str:
    parts = [p for p in message.walk() if not p.is_multipart()]
    return "\n".join(p.get_payload(decode=True).decode("utf-8") for p in parts)  # type: ignore[union-attr]


def test_a_failed_night_reaches_only_the_operators_with_a_link_that_answers(
    server: Server, tmp_path: Path, httpserver: HTTPServer
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "delivery.toml").write_text(DELIVERY_TOML, encoding="utf-8")
    (tmp_path / "prefect.yaml").write_text(
        "name: veille\ndeployments:\n  - name: veille-nuit\n    entrypoint: flows.veille:veille_flow\n"
        f"    parameters: {{corpus: {corpus}}}\n",
        encoding="utf-8",
    )
    httpserver.expect_request("/astreinte", method="POST").respond_with_data("ok")
    httpserver.expect_request("/lecteurs", method="POST").respond_with_data("ok")
    with smtp_server() as box:
        env = _env(
            server.home,
            PREFECT_API_URL=server.url,
            VEILLE_SMTP_URL=box.url(),
            VEILLE_CHAT_READERS=f"json://127.0.0.1:{httpserver.port}/lecteurs",
            VEILLE_CHAT_OPS=f"json://127.0.0.1:{httpserver.port}/astreinte",
        )
        setup = _veille("setup", "--deployments", "prefect.yaml", env=env, cwd=tmp_path)
        assert setup.returncode == 0, setup.stdout + setup.stderr
        assert "'veille: veille-nuit en échec' (2 channel(s)): created" in setup.stdout, setup.stdout
        assert "PREFECT_UI_URL" not in setup.stderr, setup.stderr  # the server knows its UI's address
        flow_run_id = _fail_a_night(server, "veille-nuit")
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not (box.messages and httpserver.log):
            time.sleep(0.5)
        time.sleep(3)  # what else the automation would send (to the readers) has had time to arrive
    assert box.messages and httpserver.log, "the automation sent nothing"
    # Only the operators: one e-mail to the on-call address, one message on their chat.
    assert [rcpt for rcpt, _ in box.messages] == [["astreinte@example.org"]]
    assert [request.path for request, _ in httpserver.log] == ["/astreinte"]
    ((_, mail),) = box.messages
    subject = str(email.header.make_header(email.header.decode_header(mail["Subject"])))
    chat = json.loads(httpserver.log[0][0].get_data())
    link = f"{server.ui}/runs/flow-run/{flow_run_id}"
    for text in (_text(mail), chat["message"]):
        assert "La nuit de la veille « veille-nuit » a échoué" in text, text
        assert link in text, text
        assert "None" not in text and RUN_PATH not in text and "/srv/" not in text, text
    assert subject == "Veille veille-nuit : nuit en échec"
    # Opened as a browser opens it (a navigation: the UI serves its page for text/html requests).
    page = httpx.get(link, headers={"Accept": "text/html,application/xhtml+xml"}, timeout=30)
    assert page.status_code == 200 and "<html" in page.text.lower()


def _other_checkout(tmp_path: Path) -> Path:
    """A second checkout of the same code (the package copied elsewhere), run by the same venv."""
    root = tmp_path / "autre-clone"
    shutil.copytree(PROJECT_ROOT / "veille", root / "veille", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _veille_of(checkout: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "import sys; from veille.cli import main; sys.argv[0] = 'veille'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**env, "PYTHONPATH": str(checkout)},
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_server_is_this_checkouts_and_a_second_checkout_is_refused(
    server: Server, tmp_path: Path
) -> None:
    env = _env(server.home, PREFECT_API_URL=server.url)
    ours = _veille("server", "--check", env=env)
    assert ours.returncode == 0 and "is this checkout's" in ours.stdout, ours.stdout + ours.stderr
    # Its database is in this checkout's keyed folder, not in PREFECT_HOME itself.
    assert (keyed_path(server.home, SERVER_KIND) / "prefect.db").exists()
    assert not (server.home / "prefect.db").exists()

    other = _other_checkout(tmp_path)
    probe = subprocess.run(
        [sys.executable, "-c", "import veille; print(veille.__file__)"],
        env={**env, "PYTHONPATH": str(other)},
        cwd=other,
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip().startswith(str(other))  # the second checkout's code runs
    check = _veille_of(other, "server", "--check", env=env)
    assert check.returncode == 1 and "is not this checkout's" in check.stderr, check.stdout + check.stderr
    port = server.url.rsplit(":", 1)[1].split("/")[0]
    start = _veille_of(other, "server", "--port", port, env=env)
    assert start.returncode == 1 and f"port {port} is already served" in start.stderr, start.stderr
    # The same checkout with another PREFECT_HOME is another server too.
    elsewhere = _veille("server", "--check", env=_env(tmp_path / "autre-home", PREFECT_API_URL=server.url))
    assert elsewhere.returncode == 1 and "is not this checkout's" in elsewhere.stderr


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


@pytest.mark.e2e
def test_server_listens_on_loopback_and_requires_the_password(
    server: Server, tmp_path: Path, reliability: Any
) -> None:
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    api = server.url

    # Bound to 127.0.0.1 only: nothing listens on another address of this machine for that port.
    addresses = _listening_addresses(port)
    assert addresses == {"127.0.0.1"}, addresses

    # The API refuses anonymous and wrong credentials; probes stay open; the UI knows it must ask.
    assert httpx.post(f"{api}/flows/filter", json={}, timeout=30).status_code == 401
    assert httpx.post(f"{api}/flows/filter", json={}, auth=(USER, "wrong"), timeout=30).status_code == 401
    assert httpx.post(f"{api}/flows/filter", json={}, auth=(USER, PASSWORD), timeout=30).status_code == 200
    assert httpx.get(f"{api}/health", timeout=30).status_code == 200
    assert httpx.get(f"{api}/ready", timeout=30).status_code == 200
    ui_settings = httpx.get(f"{server.ui}/ui-settings", timeout=30).json()
    assert ui_settings["auth"] == "BASIC" and ui_settings["csrf_enabled"] is False  # as the doc says

    # Clients without the password: one clear line, exit code 1, no traceback.
    warehouse = tmp_path / "warehouse"
    corpus = PROJECT_ROOT / "corpus"  # the offline engine plans from the bundled corpus's request
    authenticated = _env(server.home, PREFECT_API_URL=api, VEILLE_WAREHOUSE_DIR=str(warehouse))
    anonymous = {k: v for k, v in authenticated.items() if k != "PREFECT_API_AUTH_STRING"}
    outputs: list[str] = []
    for args in (("setup",), ("run", "--backend", "offline", "--corpus", str(corpus))):
        result = _veille(*args, env=anonymous, cwd=PROJECT_ROOT)
        outputs += [result.stdout, result.stderr]
        assert result.returncode == 1, (args, result.stderr[-3000:])
        assert "Traceback" not in result.stderr, result.stderr[-3000:]
        assert "refused the request (401 Unauthorized)" in result.stderr
        assert "PREFECT_API_AUTH_STRING" in result.stderr

    # With the password, the same commands work, and a run is recorded.
    setup = _veille("setup", env=authenticated, cwd=PROJECT_ROOT)
    assert setup.returncode == 0, setup.stderr[-3000:]
    run = _veille("run", "--backend", "offline", "--corpus", str(corpus), env=authenticated, cwd=PROJECT_ROOT)
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
    assert PASSWORD not in server.log.read_text(errors="replace")
    reliability.record(
        "Prefect server exposed with basic auth (PREFECT_SERVER_API_AUTH_STRING); clients without it",
        "listens on 127.0.0.1 unless told otherwise; 401 without credentials (health open); veille "
        "commands stop with one line naming PREFECT_API_AUTH_STRING; work with it; password never echoed",
        f"LISTEN on {sorted(addresses)} only; 401 anonymous / wrong password, 200 with it, /health 200; "
        "veille setup + run: exit 1 without a traceback, then exit 0 and a recorded run; password in 0 "
        "outputs, files or stored logs",
    )
