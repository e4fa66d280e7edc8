"""The environment a night against the fake Gemini server needs (real SDK, loopback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.fake_gemini import FakeGemini

__all__ = ["use_fake_gemini"]


def use_fake_gemini(
    monkeypatch: pytest.MonkeyPatch,
    server: FakeGemini,
    warehouse: Path,
    key: str = "fake-key-for-the-loopback-server",
) -> None:
    """Point veille at ``server`` with ``key``, its warehouse at ``warehouse``, and short retry delays."""
    for name, value in {
        "GEMINI_API_KEY": key,
        "VEILLE_WAREHOUSE_DIR": str(warehouse),
        "VEILLE_GEMINI_BASE_URL": server.base_url,
        "VEILLE_GEMINI_API_VERSION": "v1beta",
        "VEILLE_HTTP_RETRY_INITIAL_DELAY_S": "0.01",
    }.items():
        monkeypatch.setenv(name, value)
