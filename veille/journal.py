"""The call journal: one :class:`CallRecord` per attempt of every model call.

An attempt is one backend request: every HTTP request the Gemini backend sends is one record
(``http_requests`` = 1), its status, error class and tokens when known, whether it was answered,
refused (429, 5xx) or timed out client-side; a cache hit or a request refused before sending is a
record with ``http_requests`` = 0. So ``sum(http_requests)`` is what the server received.

Records are kept in memory and, when a path is given, appended to a JSON Lines file as they happen
(one ``write`` of one complete line, then a flush), so a crash keeps every earlier line and several
processes appending to the same file (Dask workers) do not interleave inside a line. The warehouse
reads that file into the ``llm_calls`` table; the record schema lives here, with the journal, so the
warehouse reads it without importing the model layer.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import IO

from pydantic import BaseModel

from veille.secrets import scrub_text

__all__ = ["CallJournal", "CallRecord", "prefect_run_ids", "read_journal"]


class CallRecord(BaseModel):
    """One row of the call journal: one attempt of one model call (calls.jsonl, table ``llm_calls``)."""

    run_id: str
    call_id: str  # one id per logical call; its attempts share it
    attempt: int  # 1-based, one per backend request of the call (transport retries and re-asks)
    flow_run_id: str | None = None
    task_run_id: str | None = None
    role: str
    subtask_id: str | None = None
    backend: str  # gemini | offline | scripted
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    estimated: bool = False
    cost_usd: float | None = None  # grounding included
    # Google Search grounding (the researcher): queries the answer ran, and their cost (part of
    # cost_usd; null when the model has no grounding price).
    search_queries: int = 0
    grounding_cost_usd: float | None = 0.0
    latency_s: float = 0.0
    status: str  # ok | schema_error | transient_error | error
    error_class: str | None = None
    error_message: str | None = None  # never contains the API key
    cache_hit: bool = False
    # HTTP requests sent for this attempt (0 or 1: a cache hit, a local backend, a connection that
    # never opened send none). None in journals written before the column existed.
    http_requests: int | None = None
    started_at: str  # ISO 8601 UTC


def prefect_run_ids() -> tuple[str | None, str | None]:
    """(flow_run_id, task_run_id) of the current Prefect context, or (None, None) outside one.

    Must be called in the thread running the task: Prefect's run context is a context variable,
    which the model client's event-loop thread does not see.
    """
    if "prefect" not in sys.modules:  # Prefect not even imported: we cannot be inside a run
        return None, None
    try:
        from prefect.runtime import flow_run, task_run

        flow_id = flow_run.id
        task_id = task_run.id
    except Exception:  # runtime lookups must never break a model call
        return None, None
    return (str(flow_id) if flow_id else None, str(task_id) if task_id else None)


class CallJournal:
    """Thread-safe, append-only journal of model calls."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()
        self._file: IO[str] | None = None

    def append(self, record: CallRecord) -> None:
        """Keep ``record`` and write it as one line; Prefect ids are filled in when missing."""
        if record.flow_run_id is None and record.task_run_id is None:
            flow_id, task_id = prefect_run_ids()
            if flow_id or task_id:
                record = record.model_copy(update={"flow_run_id": flow_id, "task_run_id": task_id})
        dumped = record.model_dump_json()
        line = scrub_text(dumped)  # calls.jsonl, then llm_calls: the record kept is the one written
        if line != dumped:
            record = CallRecord.model_validate_json(line)
        line += "\n"
        with self._lock:
            self._records.append(record)
            if self.path is not None:
                if self._file is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._file = self.path.open("a", encoding="utf-8")
                self._file.write(line)
                self._file.flush()

    def records(self) -> list[CallRecord]:
        """A copy of the records appended through this object (in this process)."""
        with self._lock:
            return list(self._records)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)


def read_journal(path: Path) -> list[CallRecord]:
    """Every record of a calls.jsonl file (all processes that appended to it)."""
    if not path.exists():
        return []
    records: list[CallRecord] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(CallRecord.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: not a call record: {exc}") from None
    return records
