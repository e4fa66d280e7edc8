"""`veille sql` is a sandbox: one read-only statement over the warehouse's Parquet files, nothing else.

Complements tests/test_cli_warehouse.py (writes, ATTACH, COPY, SET refused; a file outside read) with
the escapes an attacker would try next: /etc/passwd through every reader, a symlink planted inside the
warehouse, path traversal, statements smuggled through ``query()``, INSTALL/LOAD and extension
autoloading, RESET/PRAGMA/CALL/USE/EXPORT/CREATE SECRET, environment variables, and URLs. After all of
them, no file was written anywhere.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from veille.cli import warehouse as cli_warehouse
from veille.settings import Settings
from veille.warehouse import record_run_dir
from veille.warehouse.synth import write_synthetic_run


@pytest.fixture()
def app() -> typer.Typer:
    app = typer.Typer()
    cli_warehouse.register(app)
    return app


@pytest.fixture()
def warehouse(tmp_path: Path) -> Path:
    settings = Settings(warehouse_dir=tmp_path / "wh")
    run_dir = write_synthetic_run(settings.runs_dir, datetime.now(UTC), seed=3)
    record_run_dir(run_dir, settings.parquet_dir)
    # A symlink planted inside the Parquet tree, pointing outside it.
    (settings.parquet_dir / "etc-link").symlink_to("/etc")
    return settings.warehouse_dir


def sql(app: typer.Typer, warehouse: Path, statement: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["sql", statement, "--warehouse", str(warehouse), "--format", "csv"])
    return result.exit_code, result.stdout + result.stderr


def _snapshot(*roots: Path) -> dict[str, int]:
    files: dict[str, int] = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                files[str(path)] = path.stat().st_mtime_ns
    return files


READS_OUTSIDE = [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd', header = false)",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM read_json('/etc/passwd')",
    "SELECT * FROM read_parquet('/etc/passwd')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "FROM read_text('/etc/passwd')",
    "WITH x AS (SELECT * FROM read_text('/etc/passwd')) SELECT * FROM x",
    "DESCRIBE SELECT * FROM read_csv('/etc/passwd')",
    "SUMMARIZE SELECT * FROM read_csv('/etc/passwd')",
    "EXPLAIN ANALYZE SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')",
    "SELECT * FROM read_text('/proc/self/environ')",
    "SELECT * FROM read_text('{parquet}/etc-link/passwd')",  # symlink inside the warehouse
    "SELECT * FROM read_text('{parquet}/../../../../../etc/passwd')",  # traversal
    "SELECT * FROM read_csv('https://example.com/data.csv')",  # network: refused by DuckDB itself
]


@pytest.mark.parametrize("statement", READS_OUTSIDE)
def test_nothing_outside_the_warehouse_can_be_read(app: typer.Typer, warehouse: Path, statement: str) -> None:
    code, output = sql(app, warehouse, statement.format(parquet=warehouse / "parquet"))
    assert code == 2, output
    assert "may only read the warehouse" in output
    assert "root:" not in output and "PATH=" not in output  # nothing of /etc/passwd or the environment


REFUSED = [
    ("INSTALL httpfs", "INSTALL"),
    ("LOAD httpfs", "LOAD"),
    ("FORCE INSTALL sqlite_scanner", "FORCE INSTALL"),
    ("UPDATE EXTENSIONS", "UPDATE EXTENSIONS"),
    ("RESET enable_external_access", "SET"),
    ("SET allowed_directories = ['/']", "SET"),
    ("SET GLOBAL lock_configuration = false", "SET"),
    ("PRAGMA enable_external_access", "PRAGMA"),
    ("CALL pragma_version()", "CALL"),
    ("CHECKPOINT", "CALL"),
    ("USE memory", "SET"),
    ("ATTACH '{outside}/stolen.duckdb' AS stolen", "ATTACH"),
    ("ATTACH ':memory:' AS scratch", "ATTACH"),
    ("DETACH memory", "DETACH"),
    ("COPY (SELECT * FROM runs) TO '{outside}/runs.csv'", "COPY"),
    ("COPY (SELECT * FROM runs) TO '{parquet}/runs/evil.parquet'", "COPY"),
    ("EXPORT DATABASE '{outside}/dump'", "EXPORT"),
    ("CREATE SECRET leak (TYPE s3, KEY_ID 'a', SECRET 'b')", "CREATE"),
    ("CREATE VIEW v AS SELECT 1", "CREATE"),
    ("VACUUM", "VACUUM"),
]


@pytest.mark.parametrize(("statement", "kind"), REFUSED)
def test_statements_other_than_select_are_refused(
    app: typer.Typer, warehouse: Path, tmp_path: Path, statement: str, kind: str
) -> None:
    code, output = sql(app, warehouse, statement.format(outside=tmp_path, parquet=warehouse / "parquet"))
    assert code == 2, output
    assert f"the warehouse is read-only: {kind} statements are refused" in output


def test_escapes_inside_a_select_fail_and_leave_no_file(
    app: typer.Typer, warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reliability: Any
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyCANARY-sql-sandbox")
    outside = tmp_path / "outside"
    outside.mkdir()
    before = _snapshot(warehouse, outside)
    attempts = {
        # A statement smuggled through query() must still be one SELECT.
        f"SELECT * FROM query('COPY (SELECT 1) TO ''{outside}/q.csv''')": "single SELECT",
        f"SELECT * FROM query('ATTACH ''{outside}/q.duckdb''')": "single SELECT",
        "SELECT * FROM query('SET enable_external_access = true')": "single SELECT",
        # Extensions cannot be autoloaded (they would bring new readers and writers).
        "SELECT * FROM iceberg_scan('/etc')": "Loading external extensions is disabled",
        "SELECT * FROM sqlite_scan('/etc/passwd', 'x')": "Loading external extensions is disabled",
        # No access to the process environment (the API key lives there).
        "SELECT getenv('GEMINI_API_KEY')": "getenv does not exist",
    }
    for statement, expected in attempts.items():
        code, output = sql(app, warehouse, statement)
        assert code != 0 and expected in output, (statement, output)
        assert "CANARY" not in output
    # The sandbox settings are in force and locked.
    code, output = sql(
        app,
        warehouse,
        "SELECT current_setting('enable_external_access') AS external, "
        "current_setting('lock_configuration') AS locked, "
        "current_setting('autoinstall_known_extensions') AS autoinstall",
    )
    assert code == 0 and output.splitlines()[1:] == ["False,True,False"], output
    # Reading the warehouse itself works, symlinked directories excepted.
    code, output = sql(app, warehouse, "SELECT count(*) AS runs FROM runs")
    assert code == 0 and output.splitlines() == ["runs", "1"]
    after = _snapshot(warehouse, outside)
    assert after == before  # nothing written, nothing modified
    assert not list(outside.iterdir())
    assert not (Path.cwd() / "q.csv").exists()
    reliability.record(
        "`veille sql` escape attempts (/etc/passwd by every reader, planted symlink, traversal, query() "
        "smuggling, INSTALL/LOAD/autoload, SET/RESET/PRAGMA/ATTACH/COPY/EXPORT/CREATE SECRET, getenv, URL)",
        "refused with a clear message (exit 2 for sandbox refusals); no file read outside the "
        "warehouse, no file written",
        f"{len(READS_OUTSIDE)} outside reads and {len(REFUSED)} statements refused (parametrized tests), "
        f"{len(attempts)} in-SELECT escapes failed; external access off, configuration locked; "
        f"{len(after)} warehouse files unchanged, 0 files created",
    )


def test_a_file_in_duckdbs_default_temp_directory_beside_the_working_directory_is_refused(
    app: typer.Typer, warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DuckDB allows reading its temp directory; by default that is .tmp in the working directory.
    cwd = tmp_path / "cwd"
    (cwd / ".tmp").mkdir(parents=True)
    (cwd / ".tmp" / "secret.txt").write_text("canary-5f2e")
    monkeypatch.chdir(cwd)
    code, output = sql(app, warehouse, f"SELECT * FROM read_text('{cwd}/.tmp/secret.txt')")
    assert code == 2 and "may only read the warehouse" in output
    assert "canary-5f2e" not in output
    code, output = sql(app, warehouse, "SELECT * FROM read_text('.tmp/secret.txt')")
    assert code == 2 and "canary-5f2e" not in output


def test_the_row_limit_is_applied_in_the_query_and_limits_are_set(app: typer.Typer, warehouse: Path) -> None:
    # 10^12 rows could not be materialised before the 60 s timeout: the limit must be in the plan.
    code, output = sql(app, warehouse, "SELECT * FROM range(1000000000000)")
    assert code == 0, output
    lines = output.splitlines()
    assert lines[1:201] == [str(i) for i in range(200)] and "more rows not shown: the first 200" in output
    code, output = sql(
        app, warehouse, "SELECT current_setting('memory_limit') AS m, current_setting('threads') AS t"
    )
    assert code == 0 and output.splitlines()[1] in {"953.6 MiB,2", "1.0 GB,2", "1000.0 MB,2"}, output


# Peak RSS of the console script alone: a child started from pytest counts pytest's own peak (Linux
# keeps the parent's high-water mark across vfork + exec), so a small Python process starts it and
# reports what os.wait4 says of that one child.
_PEAK_OF_CHILD = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "child.returncode = os.waitstatus_to_exitcode(status)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(child.returncode)\n"
)


@pytest.mark.process
@pytest.mark.parametrize("output", ["auto", "json"])
def test_ten_million_rows_print_within_300_mb(
    warehouse: Path, tmp_path: Path, output: str, reliability
) -> None:  # type: ignore[no-untyped-def]
    """Issue 26 item 5, as a user runs it. On b0ec926: 2.17 GB to print 200 rows, 11.6 GB as JSON."""
    exe = Path(sys.executable).with_name("veille")
    statement = "select * from range(10000000)"
    peak_file = tmp_path / "peak"
    args = [str(exe), "sql", statement, "--warehouse", str(warehouse), "--format", output]
    result = subprocess.run(
        [sys.executable, "-c", _PEAK_OF_CHILD, str(peak_file), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-2000:]
    assert "199" in out and "9999999" not in out and "more rows not shown: the first 200" in out
    peak_mb = int(peak_file.read_text()) / 1024  # KiB on Linux
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB"
    reliability.record(
        f'`veille sql "{statement}"` (--format {output}; console script, subprocess)',
        "the row limit is part of the query: 200 rows printed, peak RSS under ~300 MB",
        f"exit 0, 200 rows and the 'more rows not shown' note; peak RSS {peak_mb:.0f} MB (os.wait4 of the "
        "console script)",
    )
