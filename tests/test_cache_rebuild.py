"""The model response cache is derived state (issue 26 item 2): garbage is moved aside, never fatal."""

from __future__ import annotations

import errno
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.models import cache as cache_module
from veille.models.base import Usage
from veille.models.cache import ResponseCache

KEY = "ab" + "0" * 62


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.binary(max_size=200))
def test_a_garbage_entry_is_moved_aside_and_stored_anew(
    tmp_path_factory: pytest.TempPathFactory, garbage: bytes
) -> None:
    cache = ResponseCache(tmp_path_factory.mktemp("cache") / "cache")
    entry = cache.directory / KEY[:2] / f"{KEY}.json"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(garbage)
    if cache.get(KEY) is not None:
        return  # the bytes happened to be a valid entry
    aside = list(entry.parent.glob(f"{KEY}.json.unreadable-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == garbage  # kept, not deleted
    cache.put(KEY, "answer", "model-x", Usage())
    got = cache.get(KEY)
    assert got is not None and got.text == "answer"


def test_a_file_where_the_cache_folder_should_be_is_moved_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, reliability
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "cache"
    folder.write_text("not a folder", encoding="utf-8")
    cache = ResponseCache(folder)
    assert cache.get(KEY) is None  # on main: NotADirectoryError is a miss, then put() raises
    with caplog.at_level(logging.WARNING):
        cache.put(KEY, "answer", "model-x", Usage())
    got = cache.get(KEY)
    assert got is not None and got.text == "answer"
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("cache.unreadable-")]
    assert len(aside) == 1 and any(str(folder) in r.getMessage() for r in caplog.records)
    reliability.record(
        "model response cache: a garbage entry, or a file where the cache folder should be",
        "moved aside (warning naming it); the response is asked again and stored anew",
        "garbage entries (30 hypothesis byte strings) kept as <key>.json.unreadable-<stamp>, then a miss and a "
        "fresh entry; the file kept as cache.unreadable-<stamp>, the folder created again, the entry stored",
    )


def test_disk_full_while_storing_a_response_is_a_warning_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ResponseCache(tmp_path / "cache")

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_module.json, "dump", full)
    with caplog.at_level(logging.WARNING):
        cache.put(KEY, "answer", "model-x", Usage())  # does not raise: the answer is in hand
    messages = [r.getMessage() for r in caplog.records]
    assert any("No space left on device" in m and f"{KEY}.json" in m for m in messages), messages
    assert not list((tmp_path / "cache").rglob(".tmp-*"))
