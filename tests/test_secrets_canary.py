"""Secrets: with canary API keys set, run the flow through the fake Gemini server (failures included:
4xx auth errors whose body echoes the key, 429/503 echoing it, timeouts) and the CLI, then grep every
place a secret could land: log records (caplog), stdout/stderr (capsys, the CLI's output), exception
text and tracebacks, every file of the warehouse (run folders, calls.jsonl, Parquet, DuckDB, response
cache, persisted task results), PREFECT_HOME, the Prefect server's stored logs and artifacts (through
its API) and the server's database file itself. Expected: the key reaches the fake server's
``x-goog-api-key`` header and nothing else.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import PERFECT, write_corpus
from testkit.gemini_script import role_of
from tests.faultkit import FaultyGemini, fast_task_retries, gemini_env, prompt_of
from veille.flows.veille import veille_flow

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# Two canaries: GOOGLE_API_KEY wins over GEMINI_API_KEY (the SDK's precedence); neither may leak.
KEY = "AIzaSyCANARY-secrets-3b9d0e71-google"
OTHER_KEY = "AIzaSyCANARY-secrets-a61f7c22-gemini"
CANARIES = (KEY, OTHER_KEY)


def _echo(status: int, text: str) -> Reply:
    """An error whose body echoes the key it was sent, as a misconfigured proxy or a verbose API would."""
    return Reply.error(status, f"{text}: key={KEY} (x-goog-api-key: {KEY})")


def _leaks(blob: str | bytes) -> list[str]:
    data = blob.encode() if isinstance(blob, str) else blob
    return [c for c in CANARIES if c.encode() in data]


def _files_with_canary(root: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if _leaks(data):
                found.append(str(path))
    return found


def _exception_text(exc: BaseException) -> str:
    return f"{exc}\n{exc!r}\n{''.join(traceback.format_exception(exc))}"


@pytest.fixture()
def setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeGemini, FaultyGemini, Path, Path]]:
    corpus = write_corpus(tmp_path / "corpus")
    warehouse = tmp_path / "warehouse"
    faults = FaultyGemini()
    fast_task_retries(monkeypatch)
    with FakeGemini() as server:
        server.responder = faults
        gemini_env(monkeypatch, server.base_url, warehouse)
        monkeypatch.setenv("GOOGLE_API_KEY", KEY)
        monkeypatch.setenv("GEMINI_API_KEY", OTHER_KEY)
        yield server, faults, corpus, warehouse


def _server_records(flow_run_ids: list[UUID]) -> str:
    """Everything the Prefect server stored about the runs, read back through its API."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowRunFilter,
        FlowRunFilterId,
        LogFilter,
        LogFilterFlowRunId,
    )
    from prefect.logging.handlers import APILogHandler

    APILogHandler().flush()  # logs are batched: send what is queued before reading
    parts: list[str] = []
    with get_client(sync_client=True) as client:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=flow_run_ids)))
        assert logs, "no log reached the server: the check below would prove nothing"
        parts += [log.message for log in logs]
        for run in client.read_flow_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=flow_run_ids))
        ):
            parts.append(run.model_dump_json())
        task_runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=flow_run_ids))
        )
        assert task_runs, "no task run reached the server: the check below would prove nothing"
        parts += [t.model_dump_json() for t in task_runs]
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=flow_run_ids))
        )
        assert artifacts, "no artifact was published"
        parts += [a.model_dump_json() for a in artifacts]
    return "\n".join(parts)


def _server_database() -> Path:
    from prefect.settings import get_current_settings

    url = str(get_current_settings().server.database.connection_url.get_secret_value())
    return Path(url.split(":///", 1)[1])


@pytest.mark.usefixtures("recording_prefect_api")  # the server keeps task runs: they are grepped too
def test_canary_key_never_leaves_the_request_header(
    setup: tuple[FakeGemini, FaultyGemini, Path, Path],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reliability: Any,
) -> None:
    server, faults, corpus, warehouse = setup
    caplog.set_level(logging.DEBUG)

    # Run 1: completes with a failed branch. Echoing 429 and 503 (retried), a timeout (retried), and
    # a 403 whose body holds the key on st-3 (not retryable: the branch fails, its error is recorded).
    faults.add("analyst", _echo(429, "quota"), subtask="st-1")
    faults.add("analyst", _echo(503, "upstream rejected"), subtask="st-2")
    faults.always("analyst", _echo(403, "PERMISSION_DENIED"), subtask="st-3")
    faults.add("critic", Reply.slow(1.0, Reply.json(PERFECT)))
    monkeypatch.setenv("VEILLE_REQUEST_TIMEOUT_MS", "400")
    first = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert first.is_failed()  # partial report: st-3 failed
    # Run 2: a clear stop. The planner's 401 echoes the key; the exception reaches the caller.
    faults.heal()
    faults.always("planner", _echo(401, "API key not valid. Please pass a valid API key"))
    second = veille_flow(corpus=str(corpus), backend="gemini", return_state=True, use_cache=False)
    assert second.is_failed()
    error = second.result(raise_on_failure=False)
    assert isinstance(error, BaseException) and "401" in str(error)

    # The key did reach the server, in the header only (GOOGLE_API_KEY wins, as in the SDK).
    assert server.requests and all(r.headers.get("x-goog-api-key") == KEY for r in server.requests)
    assert not [r for r in server.requests if _leaks(prompt_of(r.body))]
    statuses = {role_of(r.body): r.status for r in server.requests}
    assert statuses["planner"] == 401
    assert {r.status for r in server.requests if "Question (st-3)" in prompt_of(r.body)} == {403}

    places: dict[str, list[str]] = {
        "caplog": _leaks(caplog.text) + [c for r in caplog.records for c in _leaks(r.getMessage())],
        "exception": _leaks(_exception_text(error)),
        "warehouse files": _files_with_canary(warehouse),
        "PREFECT_HOME": _files_with_canary(Path(os.environ["PREFECT_HOME"])),
    }
    flow_runs = [s.state_details.flow_run_id for s in (first, second)]
    places["Prefect server (API)"] = _leaks(_server_records(flow_runs))
    database = _server_database()
    places["Prefect server database"] = _files_with_canary(database.parent)
    captured = capsys.readouterr()
    places["stdout/stderr"] = _leaks(captured.out + captured.err)

    assert places == {name: [] for name in places}, places
    # The failures were recorded (scrubbed), so the greps looked at real error text.
    run_dirs = sorted((warehouse / "runs").iterdir())
    assert len(run_dirs) == 2
    findings = (run_dirs[0] / "findings.json").read_text(encoding="utf-8")
    assert "HTTP403" in findings or "403" in findings
    assert "***" in (run_dirs[1] / "alerts.json").read_text(encoding="utf-8")  # the masked key
    assert list((warehouse / "parquet").rglob("*.parquet")) and database.is_file()
    reliability.record(
        "canary API key with failures echoing it (401, 403, 429, 503 bodies) and a timeout",
        "the key reaches the request header only: 0 hits in logs, output, exceptions, files, Prefect",
        f"{len(server.requests)} requests carried the key in x-goog-api-key; 0 hits in caplog "
        f"({len(caplog.records)} records), stdout/stderr, exception + traceback, "
        f"{sum(1 for p in warehouse.rglob('*') if p.is_file())} warehouse files (runs, Parquet, DuckDB, cache, "
        "task results), PREFECT_HOME, the server's logs/flow runs/task runs/artifacts and its database file",
    )


def test_cli_run_with_a_rejected_key_prints_no_secret(
    setup: tuple[FakeGemini, FaultyGemini, Path, Path], reliability: Any
) -> None:
    from prefect.settings import get_current_settings

    server, faults, corpus, warehouse = setup
    faults.always("planner", _echo(400, "API_KEY_INVALID"))
    env = dict(os.environ)
    env["PREFECT_API_URL"] = str(get_current_settings().api.url)  # the session's server: no new one
    env["PREFECT_LOGGING_LEVEL"] = "DEBUG"
    veille = Path(sys.executable).with_name("veille")

    result = subprocess.run(
        [str(veille), "run", "--backend", "gemini", "--corpus", str(corpus), "--warehouse", str(warehouse)],
        env=env,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    listing = subprocess.run(
        [str(veille), "sql", "SELECT * FROM llm_calls", "--warehouse", str(warehouse), "--format", "json"],
        env=env,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )

    assert result.returncode == 1, result.stderr[-2000:]
    assert "error:" in result.stderr and "400" in result.stderr
    assert server.requests and all(r.headers.get("x-goog-api-key") == KEY for r in server.requests)
    assert listing.returncode == 0 and "API_KEY_INVALID" in listing.stdout  # the error text is kept…
    output = result.stdout + result.stderr + listing.stdout + listing.stderr
    assert _leaks(output) == []  # …without the key
    assert _files_with_canary(warehouse) == []
    reliability.record(
        "CLI `veille run` with a key the API rejects (400 body echoing it), then `veille sql`",
        "exit code 1 with a one-line error; no secret in the output, the files or the SQL view",
        f"exit {result.returncode}, '{result.stderr.strip().splitlines()[-1][:70]}…'; 0 hits in "
        f"{len(output)} characters of output (DEBUG logging) and in the warehouse",
    )


# --- one scrubbing step at every writer (issue 23 item 6): a canary model key and a delivery URL's
# password placed in a document, a model answer, an exception and an HTTP error body ---------------
GEMINI_CANARY = "AIzaSyCANARY-writers-5c0e9a43-gemini"
DELIVERY_CANARY = "pw-CANARY-writers-delivery-8d1"
WRITER_CANARIES = (GEMINI_CANARY, DELIVERY_CANARY)
CHAT_ONLY = '[[chat]]\nname = "equipe"\nurl_env = "VEILLE_TEST_CHAT"\n'


def _writer_leaks(blob: str | bytes) -> list[str]:
    data = blob.encode() if isinstance(blob, str) else blob
    return [c for c in WRITER_CANARIES if c.encode() in data]


@pytest.mark.usefixtures("recording_prefect_api")  # the server keeps task runs: they are grepped too
def test_canaries_in_a_document_an_answer_an_exception_and_an_error_body_reach_no_writer(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    httpserver: Any,
) -> None:
    from testkit.gemini_script import gemini_responder

    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "delivery.toml").write_text(CHAT_ONLY, encoding="utf-8")
    url = f"json://veille:{DELIVERY_CANARY}@127.0.0.1:{httpserver.port}/chat"
    both = f"GEMINI_API_KEY={GEMINI_CANARY} et {url}"
    with (corpus / "docs" / "doc-01.md").open("a", encoding="utf-8") as doc:  # 1. a document
        doc.write(f"\nNote de déploiement collée par erreur : {both}.\n")
    httpserver.expect_request("/chat", method="POST").respond_with_data("ok")
    others = gemini_responder()
    seen: dict[str, int] = {}

    def respond(body: dict[str, Any], model: str) -> Reply:
        role = role_of(body)
        seen[role] = seen.get(role, 0) + 1
        if role == "analyst" and "Question (st-3)" in prompt_of(body):  # 3. an exception's text
            return Reply.error(403, f"PERMISSION_DENIED for {both}")
        if role == "analyst":  # 2. a model answer
            answer = others(body, model)
            return Reply.raw(answer.body.replace(b"Constat", f"Constat ({both})".encode()))
        if role == "writer" and seen[role] == 1:  # a validation error quoting the value
            return Reply.json({"synthesis": f"{DELIVERY_CANARY} {GEMINI_CANARY}", "sections": both})
        if role == "critic" and seen[role] == 1:  # 4. an HTTP error body
            return Reply.error(400, f"API key not valid: {both}")
        return others(body, model)

    warehouse = tmp_path / "warehouse"
    fast_task_retries(monkeypatch)
    caplog.set_level(logging.DEBUG)
    with FakeGemini() as server:
        server.responder = respond
        gemini_env(monkeypatch, server.base_url, warehouse)
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        monkeypatch.setenv("GEMINI_API_KEY", GEMINI_CANARY)
        monkeypatch.setenv("VEILLE_TEST_CHAT", url)
        state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_failed()  # st-3's branch failed (its 403): a partial dossier

    # Every echo was served, and the key went out in the header only.
    roles = [role_of(r.body) for r in server.requests]
    assert roles.count("writer") >= 2 and "critic" in roles and len(httpserver.log) == 1
    assert all(r.headers.get("x-goog-api-key") == GEMINI_CANARY for r in server.requests)
    assert not [r for r in server.requests if _writer_leaks(prompt_of(r.body))]  # the document masked
    places: dict[str, list[str]] = {
        "warehouse files": [p for p in _files_with(warehouse, _writer_leaks)],
        "caplog": _writer_leaks(caplog.text)
        + [c for r in caplog.records for c in _writer_leaks(r.getMessage())],
        "delivered": [c for request, _ in httpserver.log for c in _writer_leaks(request.get_data())],
        "Prefect server (API)": _writer_leaks(_server_records([state.state_details.flow_run_id])),
        "stdout/stderr": _writer_leaks("".join(capsys.readouterr())),
        "PREFECT_HOME (task results)": _files_with(Path(os.environ["PREFECT_HOME"]), _writer_leaks),
        "Prefect server database": _files_with(_server_database().parent, _writer_leaks),
    }
    assert places == {name: [] for name in places}, places
    # The greps read real text: the run folder holds the masked values where the canaries were.
    (run_dir,) = (warehouse / "runs").iterdir()
    alerts = (run_dir / "alerts.json").read_text(encoding="utf-8")
    assert "ingest.secret_masked" in alerts and "doc-01.md" in alerts
    assert "403" in (run_dir / "findings.json").read_text(encoding="utf-8")
    # The key and the delivery URL (registered whole: a webhook's token may sit in its path) masked.
    assert "GEMINI_API_KEY=*** et ***" in (run_dir / "calls.jsonl").read_text(encoding="utf-8")


def _files_with(root: Path, leaks: Any) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and not p.is_symlink() and leaks(p.read_bytes())]
