"""One checkout, one server (veille/ops/checkout.py): the keys that separate servers, and a shared API
of another checkout or environment never used even when it answers (its health on a loopback fake)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from veille.ops import shared_api
from veille.ops.checkout import (
    SERVER_KIND,
    SHARED_API_KIND,
    Identity,
    ServerFacts,
    current_identity,
    keyed_home,
    keyed_path,
    server_facts,
    server_is_ours,
)
from veille.ops.shared_api import STATE_NAME, SharedApiState, prefect_version, read_state, usable

_PART = st.text(alphabet="abcdefghij/._-", min_size=1, max_size=12).map(lambda s: "/" + s)


# No deadline: hypothesis's default 200 ms per example is a timing, and the first example (resolving
# paths, cold imports) took 388 ms on a loaded machine, failing `make test` as « flaky ».
@settings(deadline=None)
@given(a=st.tuples(_PART, _PART, _PART), b=st.tuples(_PART, _PART, _PART))
def test_two_checkouts_environments_or_homes_never_share_a_folder(
    a: tuple[str, str, str], b: tuple[str, str, str]
) -> None:
    # The key is a function of the three (same three, same server) and tells any two apart.
    first, second = Identity(a[0], a[1]), Identity(b[0], b[1])
    same = keyed_path(Path(a[2]), SERVER_KIND, first) == keyed_path(Path(b[2]), SERVER_KIND, second)
    assert same == (Path(a[2]).resolve() == Path(b[2]).resolve() and a[:2] == b[:2])


def test_this_process_is_this_checkout_and_venv() -> None:
    me = current_identity()
    assert Path(me.checkout) == Path(__file__).resolve().parents[1]
    assert Path(me.environment) == Path(sys.prefix).resolve()


def _state(url: str, **changes: str) -> SharedApiState:
    me = current_identity()
    state = SharedApiState(
        url=url,
        port=0,
        keeper_pid=os.getpid(),  # alive, as a keeper would be
        server_pid=os.getpid(),
        prefect_version=prefect_version(),
        idle_s=600.0,
        started_utc="2026-12-07T00:00:00+00:00",
        checkout=me.checkout,
        environment=me.environment,
    )
    return replace(state, **changes)


@pytest.mark.parametrize(
    ("changes", "used"),
    [
        ({}, True),
        ({"checkout": "/srv/autre-clone"}, False),
        ({"environment": "/srv/autre-clone/.venv"}, False),
        ({"prefect_version": "0.0.1"}, False),
    ],
)
def test_a_shared_api_of_another_checkout_or_venv_is_not_used(
    httpserver: HTTPServer, tmp_path: Path, changes: dict[str, str], used: bool
) -> None:
    httpserver.expect_request("/api/health").respond_with_json(True)
    state = _state(httpserver.url_for("/api"), **changes)
    (tmp_path / STATE_NAME).write_text(json.dumps(state.__dict__), encoding="utf-8")
    assert read_state(tmp_path) == state
    assert usable(read_state(tmp_path)) is used


def test_a_state_file_of_the_former_layout_is_not_trusted(tmp_path: Path) -> None:
    former = {
        k: v
        for k, v in _state("http://127.0.0.1:9/api").__dict__.items()
        if k not in ("checkout", "environment")
    }
    (tmp_path / STATE_NAME).write_text(json.dumps(former), encoding="utf-8")
    assert read_state(tmp_path) is None


def test_the_shared_api_starts_in_this_checkouts_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "prefect-home"
    monkeypatch.setenv("PREFECT_HOME", str(home))
    for key in (
        "PREFECT_API_URL",
        "PREFECT_SERVER_EPHEMERAL_ENABLED",
        "PREFECT_PROFILE",
        "PREFECT_PROFILES_PATH",
    ):
        monkeypatch.delenv(key, raising=False)
    spawned: list[Path] = []
    monkeypatch.setattr(shared_api, "_spawn_keeper", lambda h, _idle: spawned.append(h))
    lease = shared_api.early_lease("shared", 600)
    assert lease is not None
    lease.release()
    assert spawned == [keyed_path(home, SHARED_API_KIND)] and spawned[0].is_dir()
    assert spawned[0].parent.parent == home  # under PREFECT_HOME, never PREFECT_HOME itself


def test_a_server_is_ours_only_with_its_database_in_our_folder(tmp_path: Path) -> None:
    home = tmp_path / "prefect-home"
    ours = keyed_home(home, SERVER_KIND)
    assert server_is_ours(ServerFacts(home=ours, ui_url=None), home)
    other = keyed_path(home, SERVER_KIND, Identity("/srv/autre-clone", "/srv/autre-clone/.venv"))
    for elsewhere in (other, home, keyed_path(tmp_path / "autre-home", SERVER_KIND), None):
        assert not server_is_ours(ServerFacts(home=elsewhere, ui_url=None), home)


def test_server_facts_read_the_servers_settings(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/api/admin/settings").respond_with_json(
        {"home": "/srv/prefect", "ui_url": "http://127.0.0.1:4200"}
    )
    assert server_facts(httpserver.url_for("/api")) == ServerFacts(
        Path("/srv/prefect"), "http://127.0.0.1:4200"
    )
    httpserver.expect_request("/autre/admin/settings").respond_with_data("<html>", content_type="text/html")
    assert server_facts(httpserver.url_for("/autre")) is None  # not a Prefect server
