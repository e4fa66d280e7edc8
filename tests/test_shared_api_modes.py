"""When `veille run` takes a lease on the shared background Prefect API (veille/ops/shared_api.py):
only in ``shared`` mode and when no API is configured (environment or Prefect profile), in this
checkout's folder of PREFECT_HOME. In-process (the keeper's start is replaced), so not marked
``process``: the shared server itself is started by tests/test_shared_api.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from veille.ops.checkout import SHARED_API_KIND, keyed_path


@pytest.mark.parametrize(
    ("mode", "env", "profile", "shared"),
    [
        ("temporary", {}, None, False),
        ("shared", {"PREFECT_API_URL": "http://127.0.0.1:4200/api"}, None, False),
        ("shared", {"PREFECT_SERVER_EPHEMERAL_ENABLED": "false"}, None, False),
        (
            "shared",
            {},
            'active = "work"\n[profiles.work]\nPREFECT_API_URL = "http://127.0.0.1:4200/api"\n',
            False,
        ),
        ("shared", {}, 'active = "work"\n[profiles.work]\nPREFECT_LOGGING_LEVEL = "INFO"\n', True),
        ("shared", {}, None, True),
    ],
)
def test_a_configured_api_or_temporary_mode_starts_no_shared_server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    env: dict[str, str],
    profile: str | None,
    shared: bool,
) -> None:
    from veille.ops import shared_api

    home = tmp_path / "home"
    home.mkdir()
    if profile is not None:
        (home / "profiles.toml").write_text(profile)
    monkeypatch.setenv("PREFECT_HOME", str(home))
    for key in (
        "PREFECT_API_URL",
        "PREFECT_SERVER_EPHEMERAL_ENABLED",
        "PREFECT_PROFILE",
        "PREFECT_PROFILES_PATH",
    ):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    spawned: list[Path] = []
    monkeypatch.setattr(shared_api, "_spawn_keeper", lambda h, _idle: spawned.append(h))
    lease = shared_api.early_lease(mode, 600)
    assert (lease is not None) == shared
    # In this checkout's and venv's folder of PREFECT_HOME (veille.ops.checkout), never in it directly.
    assert spawned == ([keyed_path(home, SHARED_API_KIND)] if shared else [])
    if lease is not None:
        lease.release()
