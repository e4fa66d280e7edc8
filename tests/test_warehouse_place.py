"""`veille run` with an unusable warehouse path (issue 26 item 4): one `error:` line naming the path
and what is expected, exit 1, no traceback — checked before any Prefect server or flow starts."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from veille.cli import main
from veille.warehouse.place import UnusableWarehouseError, check_warehouse


def _file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not a folder\n", encoding="utf-8")


def _folder(path: Path) -> None:
    path.mkdir(parents=True)


# (layout under tmp, the --warehouse path, words the line must hold besides the path it names)
LAYOUTS: dict[str, tuple[Callable[[Path], None], str, str, tuple[str, ...]]] = {
    "warehouse is a file": (lambda t: _file(t / "wh"), "wh", "wh", ("is a file", "expected a folder")),
    "a parent is a file": (
        lambda t: _file(t / "blocker"),
        "blocker/wh",
        "blocker",
        ("cannot be created", "is a file", "expected a folder"),
    ),
    "runs is a file": (
        lambda t: _file(t / "wh" / "runs"),
        "wh",
        "wh/runs",
        ("is a file", "expected a folder"),
    ),
    "parquet is a file": (
        lambda t: _file(t / "wh" / "parquet"),
        "wh",
        "wh/parquet",
        ("is a file", "expected a folder"),
    ),
    "database is a folder": (
        lambda t: _folder(t / "wh" / "veille.duckdb"),
        "wh",
        "wh/veille.duckdb",
        ("is a folder", "expected a DuckDB file"),
    ),
}


def _console_run(warehouse: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("veille")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.run(
        [str(exe), "run", "--backend", "offline", "--warehouse", str(warehouse)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_console_run_on_an_unusable_warehouse_is_one_line(  # type: ignore[no-untyped-def]
    tmp_path: Path, layout: str, reliability
) -> None:
    make, given, named, words = LAYOUTS[layout]
    make(tmp_path)
    result = _console_run(tmp_path / given, tmp_path)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr[-2000:]
    assert str(tmp_path / named) in lines[0]
    assert all(word in lines[0] for word in words), lines[0]
    assert "Flow run" not in result.stderr  # refused before any flow started
    assert not (tmp_path / "wh" / "runs").is_dir()  # nothing was recorded
    reliability.record(
        f"`veille run --warehouse` on an unusable path ({layout}; console script, subprocess)",
        "one `error:` line naming the path and what is expected, exit 1, no traceback, no flow started",
        f"exit {result.returncode}: {lines[0].replace(str(tmp_path), '<tmp>')}",
    )


@pytest.mark.parametrize(
    ("code", "reason"), [(errno.EROFS, "Read-only file system"), (errno.EACCES, "Permission denied")]
)
def test_a_warehouse_that_refuses_writes_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    code: int,
    reason: str,
) -> None:
    # Tests run as root here, which a permission never stops and which cannot mount a read-only file
    # system: the refusal is the OS error the probe write would get.
    def refused(*_args: object, **_kwargs: object) -> None:
        raise OSError(code, reason)

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    monkeypatch.setattr(sys, "argv", ["veille", "run", "--warehouse", str(tmp_path / "wh")])
    with pytest.raises(SystemExit) as caught:
        main()
    out = capsys.readouterr()
    assert caught.value.code == 1
    assert "Traceback" not in out.err + out.out
    assert out.err.strip() == (
        f"error: warehouse {tmp_path / 'wh'} is not writable ({reason}); expected a folder this user "
        "can write in (or a path where one can be created)"
    )


def test_a_usable_path_is_created_and_left_clean(tmp_path: Path) -> None:
    warehouse = tmp_path / "a" / "b" / "wh"
    check_warehouse(warehouse)
    assert warehouse.is_dir() and list(warehouse.iterdir()) == []  # the probe file is gone
    (warehouse / "runs").mkdir()
    (warehouse / "veille.duckdb").write_bytes(b"")
    check_warehouse(warehouse)  # an existing warehouse's own entries are fine


def test_a_database_outside_the_warehouse_is_checked(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    with pytest.raises(UnusableWarehouseError, match=r"corpus database .*db is a folder"):
        check_warehouse(tmp_path / "wh", tmp_path / "db")
