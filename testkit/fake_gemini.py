"""A fake Gemini API server for tests and benchmarks (loopback only, never shipped).

It speaks ``POST /{v1,v1beta,v1beta1}/models/{model}:generateContent`` in the camelCase wire format
of the Gemini Developer API (and the Vertex AI ``…/publishers/google/models/{model}`` form), so the real google-genai SDK can be pointed at it with
``HttpOptions(base_url=server.base_url, api_version="v1beta")``.

Replies are scripted per call (a FIFO queue of :class:`Reply`, then an optional ``responder``
function of the request body), with the faults the model layer must survive: 429 with and without
``RetryInfo``, 5xx, slow replies (client timeouts), hang-ups, a closed port (connection refused),
a body that is not JSON, model text that is not JSON or violates the schema, ``MAX_TOKENS``
truncation and blocked prompts; and Google-Search-grounded answers with ``groundingMetadata``
(:meth:`Reply.grounded`). Every request is recorded (path, model, parsed body, headers,
arrival and completion times) and the server tracks the maximum number of requests in flight.

Use it as a context manager, or through the ``fake_gemini`` pytest fixture defined here
(register with ``pytest_plugins = ["testkit.fake_gemini"]`` in the root conftest, or wrap
:class:`FakeGemini` in a local fixture).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from testkit.netkit import closed_port_url  # re-exported: the fakes' tests import it from here

__all__ = [
    "FakeGemini",
    "RecordedRequest",
    "Reply",
    "closed_port_url",
    "fake_gemini",
]

# Gemini Developer API paths, plus the Vertex AI ones (publishers/google/…, optionally under a project).
_PATH = re.compile(
    r"^/(?P<version>v1|v1beta|v1beta1)/"
    r"(?P<vertex>(?:projects/[^/]+/locations/[^/]+/)?publishers/google/)?"
    r"models/(?P<model>[^/:]+):generateContent$"
)


@dataclass(frozen=True)
class Reply:
    """One scripted reply. Build it with the class methods, not the constructor."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # sleep before answering (slow reply → client timeout)
    hang_up: bool = False  # close the connection without any answer

    # --- successful generateContent answers -------------------------------------------------
    @classmethod
    def text(
        cls,
        text: str,
        *,
        finish_reason: str = "STOP",
        prompt_tokens: int | None = 100,
        output_tokens: int | None = 20,
        thoughts_tokens: int | None = None,
        cached_tokens: int | None = None,
        model_version: str = "fake-gemini",
        delay_s: float = 0.0,
        grounding: Mapping[str, Any] | None = None,
    ) -> Reply:
        """A 200 answer whose single candidate carries ``text`` (JSON or not: it is the model's text);
        ``grounding`` is the candidate's ``groundingMetadata`` (see :meth:`grounded`)."""
        usage: dict[str, int] = {}
        if prompt_tokens is not None:
            usage["promptTokenCount"] = prompt_tokens
        if output_tokens is not None:
            usage["candidatesTokenCount"] = output_tokens
        if thoughts_tokens is not None:
            usage["thoughtsTokenCount"] = thoughts_tokens
        if cached_tokens is not None:
            usage["cachedContentTokenCount"] = cached_tokens
        usage["totalTokenCount"] = (prompt_tokens or 0) + (output_tokens or 0) + (thoughts_tokens or 0)
        candidate: dict[str, Any] = {
            "content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": finish_reason,
            "index": 0,
        }
        if grounding is not None:
            candidate["groundingMetadata"] = dict(grounding)
        payload = {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": model_version,
            "responseId": "fake-response",
        }
        return cls.raw(json.dumps(payload), delay_s=delay_s)

    @classmethod
    def json(cls, obj: Any, **kwargs: Any) -> Reply:
        """A 200 answer whose text is ``obj`` serialised as JSON (a pydantic model is dumped)."""
        if hasattr(obj, "model_dump_json"):
            return cls.text(obj.model_dump_json(), **kwargs)
        return cls.text(json.dumps(obj, ensure_ascii=False), **kwargs)

    @classmethod
    def grounded(
        cls,
        text: str,
        *,
        chunks: Sequence[Mapping[str, str | None] | None] = (),
        supports: Sequence[tuple[str, Sequence[int]]] = (),
        queries: Sequence[str] = (),
        segment_text: bool = True,
        **kwargs: Any,
    ) -> Reply:
        """A Google-Search-grounded answer: ``text`` plus ``groundingMetadata`` in the wire format.

        ``chunks``: one ``{"uri", "title"}`` per grounding chunk (a key left out or None is absent;
        ``None`` is a chunk without ``web``). ``supports``: ``(segment, chunk indices)``, the segment a
        substring of ``text`` whose UTF-8 byte offsets are computed here (``segment_text=False``
        sends the offsets only, as the API may). Nothing given: an empty ``groundingMetadata``.
        """
        wire_chunks = []
        for chunk in chunks:
            web = {k: v for k, v in (chunk or {}).items() if v is not None}
            wire_chunks.append({"web": web} if chunk is not None else {})
        data = text.encode("utf-8")
        wire_supports = []
        for segment, indices in supports:
            start = data.find(segment.encode("utf-8"))
            assert start >= 0, f"support segment not in the text: {segment!r}"
            wire_segment: dict[str, Any] = {"startIndex": start, "endIndex": start + len(segment.encode())}
            if segment_text:
                wire_segment["text"] = segment
            wire_supports.append({"segment": wire_segment, "groundingChunkIndices": list(indices)})
        grounding: dict[str, Any] = {}
        if wire_chunks:
            grounding["groundingChunks"] = wire_chunks
        if wire_supports:
            grounding["groundingSupports"] = wire_supports
        if queries:
            grounding["webSearchQueries"] = list(queries)
        return cls.text(text, grounding=grounding, **kwargs)

    @classmethod
    def max_tokens(cls, text: str, **kwargs: Any) -> Reply:
        """Output cut by the token limit: the text is usually truncated JSON."""
        return cls.text(text, finish_reason="MAX_TOKENS", **kwargs)

    @classmethod
    def blocked(cls, reason: str = "SAFETY", *, prompt_tokens: int = 100) -> Reply:
        """A blocked prompt: no candidates, only ``promptFeedback.blockReason``."""
        payload = {
            "promptFeedback": {"blockReason": reason},
            "usageMetadata": {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens},
            "modelVersion": "fake-gemini",
        }
        return cls.raw(json.dumps(payload))

    # --- faults ---------------------------------------------------------------------------
    @classmethod
    def error(
        cls,
        status: int,
        message: str = "fake error",
        *,
        retry_delay: str | None = None,
        retry_after: str | None = None,
    ) -> Reply:
        """A Google-style error body; ``retry_delay`` (e.g. ``"0.3s"``) adds a ``RetryInfo`` detail."""
        grpc_status = {
            400: "INVALID_ARGUMENT",
            403: "PERMISSION_DENIED",
            404: "NOT_FOUND",
            408: "DEADLINE_EXCEEDED",
            429: "RESOURCE_EXHAUSTED",
            500: "INTERNAL",
            503: "UNAVAILABLE",
            504: "DEADLINE_EXCEEDED",
        }.get(status, "UNKNOWN")
        error: dict[str, Any] = {"code": status, "message": message, "status": grpc_status}
        if retry_delay is not None:
            error["details"] = [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}
            ]
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=status, body=json.dumps({"error": error}).encode(), headers=headers)

    @classmethod
    def raw(cls, body: str | bytes, *, status: int = 200, delay_s: float = 0.0) -> Reply:
        """Any body, e.g. ``Reply.raw("not json{")`` for a malformed HTTP answer."""
        data = body.encode() if isinstance(body, str) else body
        return cls(status=status, body=data, delay_s=delay_s)

    @classmethod
    def slow(cls, delay_s: float, then: Reply | None = None) -> Reply:
        """``then`` (default: a valid ``{}`` answer) after ``delay_s`` seconds."""
        base = then or cls.text("{}")
        return cls(status=base.status, body=base.body, headers=base.headers, delay_s=delay_s)

    @classmethod
    def hangup(cls) -> Reply:
        """Close the connection without answering (the client sees a disconnect)."""
        return cls(hang_up=True)


@dataclass
class RecordedRequest:
    """One request, recorded on arrival (in arrival order); the finish fields are set when it ends."""

    path: str
    api_version: str
    model: str
    vertex: bool  # the Vertex AI path form (publishers/google/models/…)
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float  # time.monotonic() when the request arrived
    finished_at: float | None = None  # time.monotonic() when the reply was sent (or the connection closed)
    status: int = 0  # 0 until answered (and for a hang-up)


Responder = Callable[[dict[str, Any], str], Reply]


class FakeGemini:
    """Threaded loopback HTTP server; see the module docstring."""

    def __init__(self, *, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s  # added to every reply (fan-out benchmarks)
        self.responder: Responder | None = None  # fn(body, model) -> Reply when the queue is empty
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeGemini:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-gemini", daemon=True
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

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    # --- scripting --------------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        """Queue replies, consumed one per request in arrival order."""
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self.max_in_flight = 0

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def settled(self, timeout_s: float = 5.0) -> list[RecordedRequest]:
        """The requests once every one has finished: the client may read a reply before the
        server thread has recorded that it sent it."""
        deadline = time.monotonic() + timeout_s
        while any(r.finished_at is None for r in self.requests) and time.monotonic() < deadline:
            time.sleep(0.005)
        return self.requests

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    # --- internals --------------------------------------------------------------------------
    def _next_reply(self, body: dict[str, Any], model: str) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(body, model)
        return Reply.error(500, "fake Gemini: no scripted reply left for this request")

    def _enter(self, record: RecordedRequest) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._requests.append(record)

    def _leave(self, record: RecordedRequest, status: int) -> None:
        with self._lock:
            self._in_flight -= 1
            record.status = status
            record.finished_at = time.monotonic()


def _make_handler(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like the real API: the SDK reuses connections

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes: without TCP_NODELAY, Nagle + delayed ACK
            # add ~40 ms to every keep-alive reply, which would swamp the overhead benchmark.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr access logs
            return

        def do_POST(self) -> None:
            received = time.monotonic()
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            match = _PATH.match(self.path.split("?", 1)[0])
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode(errors="replace")}
            record = RecordedRequest(
                path=self.path,
                api_version=match["version"] if match else "",
                model=match["model"] if match else "",
                vertex=bool(match and match["vertex"]),
                body=body,
                headers={k.lower(): v for k, v in self.headers.items()},
                received_at=received,
            )
            fake._enter(record)
            status = 0
            try:
                if match is None:
                    reply = Reply.error(404, f"fake Gemini: unknown path {self.path}")
                else:
                    reply = fake._next_reply(body, match["model"])
                delay = reply.delay_s + fake.latency_s
                if delay:
                    time.sleep(delay)
                if reply.hang_up:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status = reply.status
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(reply.body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(reply.body)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True  # the client gave up (timeout): nothing to answer
            finally:
                fake._leave(record, status)

    return Handler


@pytest.fixture()
def fake_gemini() -> Iterator[FakeGemini]:
    """A started :class:`FakeGemini`, stopped after the test."""
    with FakeGemini() as server:
        yield server
