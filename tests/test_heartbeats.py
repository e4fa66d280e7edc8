"""A flow run's end does not wait for Prefect's heartbeat thread (veille.ops.heartbeats)."""

from __future__ import annotations

import threading
from typing import Any

import prefect.flow_engine as flow_engine

import veille.flows.veille  # noqa: F401  (importing the flow installs the wrapper)
from veille.ops.heartbeats import install_heartbeat_release


class BlockedEngine:
    """The engine's side the heartbeat context reads; its heartbeat blocks until released, so the test
    knows, without timing anything, that the thread is still running when the context exits."""

    heartbeat_seconds = 30
    flow_run = None

    def __init__(self) -> None:
        self.sent = 0
        self.started = threading.Event()
        self.release = threading.Event()
        self.logger = flow_engine._engine_logger

    def _build_heartbeat_event_template(self) -> tuple[Any, Any]:
        return {}, []

    def _emit_flow_run_heartbeat(self, resource: Any, related: Any) -> None:
        self.sent += 1
        self.started.set()
        self.release.wait()


def _heartbeat_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.daemon and t is not threading.current_thread()}


def test_the_flow_module_installs_the_release_once() -> None:
    installed = flow_engine._send_heartbeats
    assert getattr(installed, "veille_releases", False)
    install_heartbeat_release()  # a second import path (the ingest flow) installs it again
    assert flow_engine._send_heartbeats is installed  # not wrapped twice


def test_the_context_exits_without_joining_and_the_thread_then_stops_without_sending() -> None:
    engine = BlockedEngine()
    before = _heartbeat_threads()
    with flow_engine._send_heartbeats(engine):  # type: ignore[arg-type]
        assert engine.started.wait(30)  # the first heartbeat is being sent
        (thread,) = _heartbeat_threads() - before
        joined: list[float | None] = []
        thread.join = joined.append  # type: ignore[assignment,method-assign]
    # Prefect's own context joins the thread here (up to 2 s, for its one-second sleep to end); the
    # wrapped one returns at once, the heartbeat thread still inside its heartbeat.
    assert joined == []
    assert thread.is_alive()
    del thread.join  # the instance's own join again
    engine.release.set()
    thread.join(30)
    assert not thread.is_alive()  # it saw the stop event and returned
    assert engine.sent == 1  # and sent no heartbeat after the run's end
