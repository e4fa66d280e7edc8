"""A fake OpenAI-compatible server for tests (loopback only, never shipped): what Ollama, vLLM and
llama.cpp's server speak.

``GET {prefix}/models`` lists :attr:`FakeOpenAI.models`; ``POST {prefix}/chat/completions`` answers
from a FIFO queue of :class:`Reply`, then from ``responder(body)``; every request is recorded. The
real ``openai`` SDK is pointed at it with ``base_url=server.base_url`` (``…/v1``).

:func:`from_gemini` turns a fake-Gemini responder (testkit/gemini_script.py: a valid answer for
every role of the flow) into one for this server, so a whole night runs against it. The "small
model" mode (:func:`small_model`) degrades answers the way small local models do: JSON in a fenced
block after a sentence, a string past its limit, an id that does not exist, an answer cut at the
token limit (``finish_reason`` ``length``).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from testkit.fake_gemini import Reply as GeminiReply
from testkit.gemini_script import gemini_responder

__all__ = [
    "FAULTS",
    "SMALL_MODEL_TURNS",
    "FakeOpenAI",
    "RecordedRequest",
    "Reply",
    "corpus_responder",
    "degrade",
    "fake_openai",
    "from_gemini",
    "small_model",
]

# What a small model gets wrong.
FAULTS = ("fenced", "overlong", "unknown_id", "truncated")
# The small model's turns: every fault, and a usable answer (fenced) in any three consecutive turns.
# A conversation starts at the turn its arrival reaches, and the caller asks at most three times: with
# FAULTS in turn, a branch arriving second got overlong → unknown_id → truncated, and one whose answer
# holds a single finding then failed (each item invalid), by thread timing alone (a CI-only failure).
SMALL_MODEL_TURNS = ("fenced", "overlong", "fenced", "unknown_id", "fenced", "truncated")


@dataclass(frozen=True)
class Reply:
    """One scripted reply. Build it with the class methods."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    @classmethod
    def text(
        cls,
        text: str,
        *,
        finish_reason: str = "stop",
        prompt_tokens: int | None = 100,
        completion_tokens: int = 20,
        reasoning_tokens: int | None = None,
        model: str = "fake-model",
    ) -> Reply:
        """A 200 chat completion whose message is ``text``; ``prompt_tokens=None``: no ``usage``."""
        body: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish_reason,
                }
            ],
        }
        if prompt_tokens is not None:
            usage: dict[str, Any] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
            if reasoning_tokens is not None:
                usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
            body["usage"] = usage
        return cls(200, json.dumps(body).encode())

    @classmethod
    def json(cls, obj: Any, **kwargs: Any) -> Reply:
        """A 200 answer whose text is ``obj`` as JSON (a pydantic model is dumped)."""
        text = (
            obj.model_dump_json() if hasattr(obj, "model_dump_json") else json.dumps(obj, ensure_ascii=False)
        )
        return cls.text(text, **kwargs)

    @classmethod
    def error(cls, status: int, message: str = "fake error", *, retry_after: str | None = None) -> Reply:
        """An error in OpenAI's shape (``{"error": {"message", "type", "code"}}``)."""
        body = json.dumps({"error": {"message": message, "type": "fake", "code": status}}).encode()
        return cls(status, body, {"retry-after": retry_after} if retry_after is not None else {})


@dataclass
class RecordedRequest:
    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float
    status: int = 0

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.body.get("messages", []) if m["role"] == "system"), "")

    @property
    def prompt(self) -> str:
        return next((m["content"] for m in self.body.get("messages", []) if m["role"] == "user"), "")


Responder = Callable[[dict[str, Any]], Reply]


class FakeOpenAI:
    """Threaded loopback HTTP server; see the module docstring."""

    def __init__(
        self, *, models: Sequence[str] = ("fake-small-model", "fake-other"), prefix: str = "/v1"
    ) -> None:
        self.models = list(models)
        self.prefix = prefix
        self.responder: Responder | None = None
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeOpenAI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.prefix}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def completions(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Reply.error(500, "fake OpenAI: no scripted reply left")

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, reply: Reply, record: RecordedRequest) -> None:
            if reply.delay_s:
                time.sleep(reply.delay_s)
            record.status = reply.status
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()

        def _record(self, body: dict[str, Any]) -> RecordedRequest:
            record = RecordedRequest(self.command, self.path, body,
                                     {k.lower(): v for k, v in self.headers.items()}, time.monotonic())  # fmt: skip
            fake._record(record)
            return record

        def do_GET(self) -> None:
            record = self._record({})
            if self.path.split("?", 1)[0] == f"{fake.prefix}/models":
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in fake.models]
                self._send(Reply(200, json.dumps({"object": "list", "data": data}).encode()), record)
            else:
                self._send(Reply.error(404, f"fake OpenAI: unknown path {self.path}"), record)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode(errors="replace")}
            record = self._record(body)
            if self.path.split("?", 1)[0] != f"{fake.prefix}/chat/completions":
                self._send(Reply.error(404, f"fake OpenAI: unknown path {self.path}"), record)
                return
            try:
                self._send(fake._reply(body), record)
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True

    return Handler


def from_gemini(gemini: Callable[[dict[str, Any], str], GeminiReply]) -> Responder:
    """A responder for this server made of a fake-Gemini one: the system and user messages become
    Gemini's ``systemInstruction`` and first content, the answer's text and usage come back as a
    chat completion (errors pass through with their status)."""

    def respond(body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        prompt = next((m["content"] for m in messages if m["role"] == "user"), "")
        # JSON mode states the schema after the instructions: the role is told by the instructions.
        system = system.split("\n\nRéponds uniquement avec un objet JSON conforme à ce schéma JSON", 1)[0]
        shaped = {
            "systemInstruction": {"parts": [{"text": system}]},
            "contents": [{"parts": [{"text": prompt}]}],
        }
        answer = gemini(shaped, str(body.get("model", "")))
        if answer.status != 200:
            return Reply.error(answer.status, answer.body.decode(errors="replace"))
        data = json.loads(answer.body)
        text = "".join(p.get("text", "") for p in data["candidates"][0]["content"]["parts"])
        usage = data.get("usageMetadata", {})
        return Reply.text(text, prompt_tokens=usage.get("promptTokenCount", 100),
                          completion_tokens=usage.get("candidatesTokenCount", 20), model=str(body.get("model")))  # fmt: skip

    return respond


def corpus_responder() -> Responder:
    """:func:`from_gemini` of the fake-Gemini responder, whose planner answers any corpus as a
    schema-following model would: the ids its schema allows (the catalogue's, an enum), in order,
    in as many sub-tasks as the schema allows of at most as many documents as it allows."""
    others = from_gemini(gemini_responder())

    def respond(body: dict[str, Any]) -> Reply:
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
        sub_tasks = schema.get("properties", {}).get("sub_tasks", {})
        doc_ids = sub_tasks.get("items", {}).get("properties", {}).get("doc_ids", {})
        ids = doc_ids.get("items", {}).get("enum")
        if not ids:  # not the planner (or JSON mode): answered as on the fake Gemini
            return others(body)
        per_task = int(doc_ids.get("maxItems", len(ids)))
        most = int(sub_tasks.get("maxItems", 1))
        size = max(per_task if len(ids) > per_task * most else -(-len(ids) // most), 1)
        chunks = [ids[i : i + size] for i in range(0, len(ids), size)][:most]
        plan = {
            "sub_tasks": [
                {"id": f"st-{n}", "question": f"Que disent les documents {c[0]} à {c[-1]} ?", "doc_ids": c}
                for n, c in enumerate(chunks, 1)
            ],
            "excluded": [i for i in ids if not any(i in c for c in chunks)],
        }
        return Reply.json(plan, prompt_tokens=2000, completion_tokens=200, model=str(body.get("model")))

    return respond


def degrade(text: str, fault: str) -> tuple[str, str]:
    """``text`` (a JSON answer) as a small model would spoil it with ``fault`` (one of
    :data:`FAULTS`), and the finish reason it comes with."""
    if fault == "fenced":
        return f"Voici la réponse demandée :\n```json\n{text}\n```", "stop"
    if fault == "truncated":
        return text[: max(1, len(text) // 2)], "length"
    data = json.loads(text)
    if fault == "overlong":
        _first_string(data, lambda s: s + " " + "trop long " * 250)  # past every maxLength (2,000)
    elif fault == "unknown_id":
        _first_string(data, lambda s: s, ids=True)
    else:
        raise ValueError(f"unknown fault {fault!r}; expected one of {', '.join(FAULTS)}")
    return json.dumps(data, ensure_ascii=False), "stop"


def _first_string(data: Any, change: Callable[[str], str], *, ids: bool = False) -> bool:
    """Apply ``change`` to the first string of ``data`` (``ids``: append an id that does not exist
    to the first list of ids, ``doc_ids``). True when something was changed."""
    if isinstance(data, dict):
        for key, value in data.items():
            if ids and key == "doc_ids" and isinstance(value, list):
                value.append("doc-inexistant-999")
                return True
            if not ids and isinstance(value, str):
                data[key] = change(value)
                return True
            if _first_string(value, change, ids=ids):
                return True
    elif isinstance(data, list):
        return any(_first_string(item, change, ids=ids) for item in data)
    return False


def small_model(responder: Responder, faults: Sequence[str] = SMALL_MODEL_TURNS) -> Responder:
    """``responder`` whose answers are spoiled in turn by each of ``faults`` (then again), like a
    small local model; the answers it spoiled are in ``respond.spoiled``. The turn is kept per
    conversation (its first messages; a re-ask only adds to them): one request's re-asks get the
    next faults, so its answers are never cut twice in a row however the branches' requests
    interleave (a global turn let one branch draw « truncated » on every attempt)."""
    count = 0
    turns: dict[str, int] = {}
    lock = threading.Lock()
    spoiled: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        nonlocal count
        reply = responder(body)
        if reply.status != 200:
            return reply
        messages = body.get("messages") or []
        key = json.dumps([m.get("content") for m in messages[:2]], ensure_ascii=False)[:2000]
        with lock:
            if key not in turns:  # a new conversation starts where the turn stands
                turns[key] = count
                count += 1
            fault = faults[turns[key] % len(faults)]
            turns[key] += 1
            spoiled.append(fault)
        data = json.loads(reply.body)
        text = data["choices"][0]["message"]["content"]
        spoilt, finish = degrade(text, fault)
        data["choices"][0]["message"]["content"] = spoilt
        data["choices"][0]["finish_reason"] = finish
        return Reply(200, json.dumps(data).encode())

    respond.spoiled = spoiled  # type: ignore[attr-defined]
    return respond


@pytest.fixture()
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started :class:`FakeOpenAI`, stopped after the test."""
    with FakeOpenAI() as server:
        yield server
