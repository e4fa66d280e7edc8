"""CI's entry point (.ci/run) runs both halves of the suite and fails when either fails.

`make test` leaves out the tests marked `process`, `make test-process` runs only them: a test lost
between the two would run nowhere. .ci/run is run here against a stand-in `make` on PATH that
records its targets and exits with the status the test asks for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]

_FAKE_MAKE = """#!/usr/bin/env bash
echo "$1" >> "$CI_TARGETS"
echo "closing line of $1"
case " $CI_FAILING " in *" $1 "*) exit 2 ;; esac
exit 0
"""


def _dry_run(target: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    result = subprocess.run(
        ["make", "-n", "-s", "-W", ".venv/.installed", target],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_test_and_make_test_process_split_the_suite_on_the_process_marker() -> None:
    pytest_lines = [line for line in _dry_run("test").splitlines() if "pytest" in line]
    assert len(pytest_lines) == 1 and '-m "not process"' in pytest_lines[0], pytest_lines
    process_lines = [line for line in _dry_run("test-process").splitlines() if "pytest" in line]
    assert len(process_lines) == 1 and "-m process" in process_lines[0], process_lines


@pytest.mark.parametrize(
    ("failing", "expected_exit"),
    [("", 0), ("test", 1), ("test-process", 1), ("test test-process", 1)],
)
def test_ci_runs_both_parts_and_fails_if_either_fails(
    tmp_path: Path, failing: str, expected_exit: int
) -> None:
    (tmp_path / ".ci").mkdir()
    shutil.copy2(PROJECT_ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").write_text(_FAKE_MAKE, encoding="utf-8")
    (bin_dir / "make").chmod(0o755)
    targets = tmp_path / "targets"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CI_TARGETS": str(targets),
        "CI_FAILING": failing,
    }
    result = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == expected_exit, (result.stdout, result.stderr)
    assert targets.read_text(encoding="utf-8").split() == ["test", "test-process"]
    # Each part's closing lines stay in the log, in order.
    assert result.stdout.splitlines() == ["closing line of test", "closing line of test-process"]
    for target in failing.split():
        assert f"make {target} (exit 2)" in result.stderr
