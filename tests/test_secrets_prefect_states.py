"""A non-model exception quoting a configured secret (issue 23 item 6): Prefect writes a raised
exception's text into the task and flow run state messages (sent to its server, not through
logging), pickles it as the failed run's result (base64 in a file), and the expected-failure log
filter adds it to its one line. None of them may hold the key."""

from __future__ import annotations

import base64
import logging
import os
import re
from pathlib import Path
from typing import Any

import pytest

from testkit.flowkit import write_corpus
from tests.test_secrets_canary import _server_database, _server_records
from veille.flows.veille import veille_flow

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

CANARY = "AIzaSyCANARY-state-7f3e21-nonmodel"
_BASE64 = re.compile(rb"[A-Za-z0-9+/]{40,}={0,2}")


class ExpectedError(RuntimeError):
    expected_failure = True  # logged as one line by veille.ops.logfilter


def _files_with_canary(root: Path) -> list[str]:
    """Files holding the canary as written or inside a base64 run (Prefect's pickled results)."""
    found = []
    for path in (p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        data = path.read_bytes()
        blobs = [data]
        for run in _BASE64.findall(data):
            try:
                blobs.append(base64.b64decode(run + b"=" * (-len(run) % 4)))
            except ValueError:
                continue
        if any(CANARY.encode() in blob for blob in blobs):
            found.append(str(path))
    return found


@pytest.mark.usefixtures("recording_prefect_api")  # the task runs' state messages are grepped too
@pytest.mark.parametrize(
    ("step", "kind"), [("news", RuntimeError), ("news", ExpectedError), ("analyse", OSError)]
)
def test_a_step_exception_quoting_the_key_reaches_no_prefect_record(
    step: str,
    kind: type[Exception],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import veille.tasks.analyse as analyse
    import veille.tasks.news as news

    def boom(*args: Any, **kwargs: Any) -> Any:
        if kind is OSError:  # its text is built from strerror and filename, not args
            raise OSError(5, f"cannot read with key {CANARY}", f"/tmp/{CANARY}.md")
        raise kind(f"cannot read the previous run with key {CANARY}") from ValueError(CANARY)

    if step == "news":  # a task outside the model's path; the flow re-raises it
        monkeypatch.setattr(news, "compare_snapshots", boom)
    else:  # a mapped task with retries: each attempt's state, then the flow's own error
        monkeypatch.setattr(analyse, "fetch_documents", boom)
    monkeypatch.setenv("GEMINI_API_KEY", CANARY)
    warehouse = tmp_path / "warehouse"
    caplog.set_level(logging.DEBUG)
    state = veille_flow(
        corpus=str(write_corpus(tmp_path / "corpus")),
        backend="offline",
        warehouse=str(warehouse),
        return_state=True,
    )
    assert state.is_failed()
    server = _server_records([state.state_details.flow_run_id])
    assert "cannot read" in server  # the task run's state message kept its text, masked
    places = {
        "flow run state message": CANARY in (state.message or ""),
        "Prefect server (states, logs, artifacts)": CANARY in server,
        "caplog": CANARY in caplog.text or any(CANARY in r.getMessage() for r in caplog.records),
        "stdout/stderr": CANARY in "".join(capsys.readouterr()),
        "warehouse files": _files_with_canary(warehouse),
        "PREFECT_HOME (results)": _files_with_canary(Path(os.environ["PREFECT_HOME"])),
        "Prefect server database": _files_with_canary(_server_database().parent),
    }
    assert places == dict.fromkeys(places, False) | {
        "warehouse files": [],
        "PREFECT_HOME (results)": [],
        "Prefect server database": [],
    }, places
