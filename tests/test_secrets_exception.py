"""veille.secrets.scrub_exception: the flow's own error is masked in place and still raised."""

from __future__ import annotations

import pytest

from veille.secrets import scrub_exception

KEY = "CANARY-exception-key-0123456789"


class _ReadOnly(Exception):
    """An exception whose attributes cannot be set once made (a library's frozen error)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        object.__setattr__(self, "detail", text)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{name} is read-only")


def test_the_key_is_masked_in_args_attributes_causes_and_os_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    cause = OSError(28, f"no space ({KEY})", f"/tmp/{KEY}.wal")
    error = RuntimeError(f"step failed with {KEY}", [KEY])
    error.note = {"url": f"https://x.example/?key={KEY}"}  # type: ignore[attr-defined]
    error.__cause__ = cause
    scrub_exception(error)
    assert KEY not in repr(error.args) and KEY not in repr(error.note)  # type: ignore[attr-defined]
    assert KEY not in str(cause) and KEY not in repr(cause.args)


def test_a_read_only_attribute_does_not_replace_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    error = _ReadOnly(f"refused: {KEY}")
    scrub_exception(error)  # must not raise: the caller re-raises the run's own error next
    assert KEY not in str(error)
