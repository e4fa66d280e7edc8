"""Helpers for the fault-matrix, injection and secrets tests: the veille flow through the real
google-genai SDK against the fake Gemini server, with faults scripted per role (and per analyst
sub-task), and readers for what a run leaves behind (run folder, journal, Parquet alert rows).
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import DOCS, write_corpus
from testkit.gemini_script import gemini_responder, role_of

__all__ = [
    "CANARY",
    "FaultyGemini",
    "GeminiFlow",
    "GeminiRun",
    "alert_codes",
    "fast_task_retries",
    "gemini_env",
    "gemini_flow",
    "parquet_alerts",
    "prompt_of",
    "subtask_of",
]

# A key-shaped canary: it must reach the fake server's x-goog-api-key header and nothing else.
CANARY = "AIzaSyCANARY-veille-7f3e9c1d-never-log-this"

Responder = Callable[[dict[str, Any], str], Reply]


def prompt_of(body: dict[str, Any]) -> str:
    """The first user turn of a generateContent body (the prompt the flow built)."""
    return "".join(p.get("text", "") for p in body["contents"][0].get("parts", []))


def subtask_of(body: dict[str, Any]) -> str | None:
    """The sub-task id an analyst prompt names ("Question (st-2) : …"), else None."""
    match = re.search(r"Question \((st-\d+)\)", prompt_of(body))
    return match.group(1) if match else None


class FaultyGemini:
    """A ``FakeGemini.responder``: scripted faults first, per role or per analyst sub-task, then ``base``.

    ``add("critic", Reply.error(503))`` queues a reply for the next critic request;
    ``always("analyst", Reply.error(503), subtask="st-2")`` answers every st-2 analyst request with it.
    Keys are ``role`` or ``role/subtask``; ``seen`` counts requests per key (both forms for analysts).
    """

    def __init__(self, base: Responder | None = None) -> None:
        self.base = base or gemini_responder()
        self._queues: dict[str, deque[Reply | Responder]] = defaultdict(deque)
        self._always: dict[str, Reply | Responder] = {}
        self.seen: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    @staticmethod
    def _key(role: str, subtask: str | None) -> str:
        return f"{role}/{subtask}" if subtask else role

    def add(self, role: str, *replies: Reply | Responder, subtask: str | None = None) -> FaultyGemini:
        with self._lock:
            self._queues[self._key(role, subtask)].extend(replies)
        return self

    def always(self, role: str, reply: Reply | Responder, subtask: str | None = None) -> FaultyGemini:
        with self._lock:
            self._always[self._key(role, subtask)] = reply
        return self

    def heal(self) -> None:
        """Drop every scripted fault: from now on, ``base`` answers."""
        with self._lock:
            self._queues.clear()
            self._always.clear()

    def __call__(self, body: dict[str, Any], model: str) -> Reply:
        role = role_of(body)
        keys = [self._key(role, subtask_of(body)), role] if role == "analyst" else [role]
        chosen: Reply | Responder | None = None
        with self._lock:
            for key in dict.fromkeys(keys):
                self.seen[key] += 1
            for key in keys:
                if self._queues.get(key):
                    chosen = self._queues[key].popleft()
                    break
                if key in self._always:
                    chosen = self._always[key]
                    break
        if chosen is None:
            return self.base(body, model)
        return chosen(body, model) if callable(chosen) else chosen


def gemini_env(monkeypatch: pytest.MonkeyPatch, base_url: str, warehouse: Path, **settings: str) -> None:
    """Environment of a Gemini run against ``base_url``: canary key, warehouse, fast HTTP retries."""
    values = {
        "GEMINI_API_KEY": CANARY,
        "VEILLE_WAREHOUSE_DIR": str(warehouse),
        "VEILLE_GEMINI_BASE_URL": base_url,
        "VEILLE_GEMINI_API_VERSION": "v1beta",
        "VEILLE_HTTP_ATTEMPTS": "3",
        "VEILLE_HTTP_RETRY_INITIAL_DELAY_S": "0.01",
        "VEILLE_HTTP_RETRY_MAX_DELAY_S": "2",
        "VEILLE_REQUEST_TIMEOUT_MS": "5000",
    }
    values.update({f"VEILLE_{k.upper()}": v for k, v in settings.items()})
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def fast_task_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prefect task retries without their 2 s / 4 s backoff: same retries, same conditions, no sleep."""
    from veille.tasks.analyse import analyse
    from veille.tasks.plan import plan
    from veille.tasks.write import write_report

    for task in (plan, analyse, write_report):
        assert task.retries == 2  # the behaviour under test is unchanged: only the delay goes
        monkeypatch.setattr(task, "retry_delay_seconds", [0.0] * task.retries)


@dataclass
class GeminiRun:
    """One flow run's outcome and what it left on disk."""

    state: Any
    run_dir: Path
    warehouse: Path

    @property
    def run(self) -> dict[str, Any]:
        return _json(self.run_dir / "run.json")

    @property
    def alerts(self) -> list[dict[str, Any]]:
        return list(_json(self.run_dir / "alerts.json"))

    @property
    def findings(self) -> dict[str, Any]:
        return dict(_json(self.run_dir / "findings.json"))

    def calls(self) -> list[Any]:
        from veille.journal import read_journal

        return read_journal(self.run_dir / "calls.jsonl")

    def parquet_alerts(self) -> list[tuple[str, str | None]]:
        return parquet_alerts(self.warehouse, self.run["run_id"])

    def parquet(self, sql: str) -> list[tuple[Any, ...]]:
        from veille.warehouse import query

        return query(self.warehouse / "parquet", sql, [self.run["run_id"]])[1]


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def alert_codes(run: GeminiRun) -> list[str]:
    return [a["code"] for a in run.alerts]


def parquet_alerts(warehouse: Path, run_id: str) -> list[tuple[str, str | None]]:
    """(code, subject) of the run's rows in the Parquet ``alerts`` table, in seq order."""
    from veille.warehouse import query

    _, rows = query(
        warehouse / "parquet", "SELECT code, subject FROM alerts WHERE run_id = ? ORDER BY seq", [run_id]
    )
    return [(str(code), subject) for code, subject in rows]


GeminiFlow = tuple[FakeGemini, FaultyGemini, Callable[..., GeminiRun]]


@contextmanager
def gemini_flow(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    docs: Sequence[tuple[str, str, str, str, str]] = DOCS,
) -> Iterator[GeminiFlow]:
    """(server, faults, run): ``run(env=None, **flow params)`` runs the veille flow on the flowkit corpus
    with the Gemini backend through the SDK against ``server``, whose replies ``faults`` scripts.

    Test modules wrap it in a fixture: ``yield from`` inside ``with gemini_flow(...) as flow``.
    """
    from veille.flows.veille import veille_flow

    corpus = write_corpus(tmp_path / "corpus", docs)
    warehouse = tmp_path / "warehouse"
    faults = FaultyGemini()
    fast_task_retries(monkeypatch)
    with FakeGemini() as server:
        server.responder = faults
        gemini_env(monkeypatch, server.base_url, warehouse)

        def run(env: Mapping[str, str] | None = None, **params: Any) -> GeminiRun:
            for name, value in (env or {}).items():
                monkeypatch.setenv(name, value)
            before = set((warehouse / "runs").iterdir()) if (warehouse / "runs").is_dir() else set()
            state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True, **params)
            [run_dir] = set((warehouse / "runs").iterdir()) - before
            return GeminiRun(state=state, run_dir=run_dir, warehouse=warehouse)

        yield server, faults, run
