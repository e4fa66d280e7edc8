"""Tasks get the run's client as data (tasks.clients.RunClient), never the live object.

In the flow's process the handle reaches the run's live client (same journal, same loop); in another
process (a Dask worker) it builds one for the run from the settings and appends to the same
calls.jsonl; a run built around an explicit model object cannot be rebuilt elsewhere (clear error).
A live ModelClient refuses to be pickled.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from testkit.fake_gemini import FakeGemini, Reply
from testkit.scripted import ScriptedModel, as_provider
from veille.backends import build_client
from veille.journal import read_journal
from veille.settings import PROJECT_ROOT, Settings
from veille.tasks.clients import RunClient, open_client


class Answer(BaseModel):
    verdict: str


def test_a_live_client_is_never_pickled(tmp_path: Path) -> None:
    settings = Settings(backend="offline", warehouse_dir=tmp_path)
    with build_client(settings, run_id="r") as client, pytest.raises(TypeError, match="RunClient"):
        pickle.dumps(client)


def test_the_handle_pickles_as_data_and_reaches_the_runs_live_client(tmp_path: Path) -> None:
    model = ScriptedModel(function=lambda request: Answer(verdict="ok"))  # a lambda: not picklable
    with as_provider(model) as name:
        settings = Settings(backend=name, warehouse_dir=tmp_path)
        with open_client(settings, "run-h", tmp_path / "calls.jsonl") as handle:
            clone = pickle.loads(pickle.dumps(handle))
            assert clone == handle and clone.client() is handle.client()
            clone.client().call("critic", "S", "P", Answer)
            assert [r.role for r in handle.journal.records()] == ["critic"]
            assert model.requests_for("critic")  # the registered object answered, nothing else
    # The run is over (or this is another process): an explicit model cannot be rebuilt.
    with pytest.raises(RuntimeError, match="explicit model object"):
        clone.client()


def test_a_settings_built_run_is_rebuilt_in_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a Dask worker does: unpickle the handle, call through it, append to the same journal."""
    monkeypatch.setenv("GEMINI_API_KEY", "CANARY-subprocess-key")
    journal = tmp_path / "calls.jsonl"
    with FakeGemini() as server:
        server.responder = lambda body, model: Reply.json(Answer(verdict="ok"))
        settings = Settings(
            backend="gemini",
            gemini_base_url=server.base_url,
            gemini_api_version="v1beta",
            warehouse_dir=tmp_path / "warehouse",
            use_cache=False,
        )
        with open_client(settings, "run-dask", journal) as handle:
            handle.client().call("analyst", "Système.", "Depuis le flow", Answer)
            blob = tmp_path / "handle.pickle"
            blob.write_bytes(pickle.dumps(handle))
            script = (
                "import pickle, sys\n"
                "from tests.test_run_client import Answer\n"
                "handle = pickle.loads(open(sys.argv[1], 'rb').read())\n"
                "client = handle.client()\n"
                "result = client.call('analyst', 'Système.', 'Depuis un worker', Answer)\n"
                "print(client.backend, client.run_id, result.output.verdict)\n"
                "client.close()\n"
            )
            done = subprocess.run(
                [sys.executable, "-c", script, str(blob)],
                capture_output=True,
                text=True,
                timeout=180,
                env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
                cwd=PROJECT_ROOT,
            )
        assert isinstance(handle, RunClient)

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-3:] == ["gemini", "run-dask", "ok"]
    assert [r.run_id for r in read_journal(journal)] == ["run-dask", "run-dask"]
    assert len(server.requests) == 2
    assert "CANARY-subprocess-key" not in blob.read_bytes().decode("latin-1")
