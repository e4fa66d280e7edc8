"""veille installs as a package: build the wheel, install it (not editable), run it from elsewhere.

Offline: the wheel is built with the project's own setuptools (its PEP 517 backend, no isolation)
and installed with plain pip into a fresh venv that holds only what uv resolves for it from its
declared requirements and constraints.txt, pip checking at install that nothing is missing
(tests/wheelkit.py): an import nobody declares fails here as it would on a fresh machine. The checkout is not on the path, and the run starts in an
empty folder: whatever it reads (configuration, views, queries) must come from the installed
package. Its Prefect API is the session's test API (no server of its own to start and migrate).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.wheelkit import metadata_wheelhouse, pip, populate_venv, resolve

# A full offline run on a shared machine.
pytestmark = [pytest.mark.process, pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_CORPUS = ROOT / "corpus"


def _env(prefect_home: Path, api_url: str) -> dict[str, str]:
    # Nothing of this session's Prefect settings, keys or path reaches the child but the address of
    # its test API (tests/conftest.py prefect_harness): a run needs a Prefect API, and starting one of
    # its own (a server process and the migrations of a fresh database, about half the CPU of this
    # test) checks nothing about the package. Starting and stopping veille's servers is
    # tests/test_ephemeral_orphans.py's, test_shared_api.py's and test_concurrent_runs.py's.
    dropped = {"GEMINI_API_KEY", "GOOGLE_API_KEY", "PYTHONPATH", "VIRTUAL_ENV", "VEILLE_CONFIG"}
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "VEILLE_")) and k not in dropped
    }
    env.update(
        PREFECT_HOME=str(prefect_home),
        PREFECT_API_URL=api_url,
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT="false",
        DO_NOT_TRACK="1",
        PIP_NO_INPUT="1",
        # Unused while PREFECT_API_URL is set; were it ignored, no background server is left behind.
        VEILLE_PREFECT_SERVER="temporary",
    )
    return env


def _flow_runs() -> int:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.count_flow_runs()


def _run(argv: list[str | Path], *, cwd: Path, env: dict[str, str], timeout: int) -> str:
    proc = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, (
        f"{argv[:3]} exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc.stdout


def _source_copy(dest: Path) -> Path:
    """The files the build reads (pyproject, README, the packages it lists), without caches."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = [p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]]
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    for package in packages:
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _build_wheel(src: Path, dist: Path, env: dict[str, str]) -> Path:
    """The project's build backend (setuptools, pyproject's ``build-system``) called as a PEP 517
    front end calls it without isolation: what ``pip wheel --no-build-isolation --no-index`` ran,
    without pip's own start-up and resolution (about 0.6 of its 1.1 s of CPU)."""
    dist.mkdir()
    _run(
        [
            sys.executable,
            "-c",
            f"import setuptools.build_meta as backend; backend.build_wheel({str(dist)!r})",
        ],
        cwd=src,
        env=env,
        timeout=600,
    )
    (wheel,) = dist.glob("veille-*.whl")
    return wheel


def _venv_with_wheel(venv: Path, wheel: Path, env: dict[str, str]) -> Path:
    """A fresh venv with what plain pip installs for the wheel (tests/wheelkit.py), then the wheel."""
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=venv.parent, env=env, timeout=300)
    python = venv / "bin" / "python"
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        cwd=venv.parent,
        env=env,
        timeout=60,
    ).strip()
    house = metadata_wheelhouse(venv.parent / "wheelhouse", skip="veille")
    names = resolve(wheel, house, ROOT / "constraints.txt", python, cwd=venv.parent, env=env)
    assert "lxml_html_clean" in names  # justext imports lxml.html.clean (the ImportError)
    assert populate_venv(Path(purelib), names, skip="veille") > 0
    # Plain pip, no index: it installs the wheel only if every declared requirement is present.
    pip(["--python", python, "install", "--no-index", wheel], cwd=venv.parent, env=env)
    return python


def test_the_wheel_installs_and_runs_from_another_folder(prefect_harness: None, tmp_path: Path) -> None:
    from prefect.settings import PREFECT_API_URL

    env = _env(tmp_path / "prefect-home", str(PREFECT_API_URL.value()))
    wheel = _build_wheel(_source_copy(tmp_path / "src"), tmp_path / "dist", env)
    venv = tmp_path / "venv"
    python = _venv_with_wheel(venv, wheel, env)
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()

    # Only the veille package at the top level: no generic "flows" or "tasks" in site-packages.
    with zipfile.ZipFile(wheel) as zf:
        tops = {name.split("/")[0] for name in zf.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"veille"}, tops

    collector = "import pkgutil, importlib, veille.collect as c; " + (
        "[importlib.import_module(m.name) for m in pkgutil.walk_packages(c.__path__, 'veille.collect.')]; "
        "import veille.cli.collect, veille.flows.veille, veille.tasks.collect, veille; print(veille.__file__)"
    )
    where = _run([python, "-c", collector], cwd=workdir, env=env, timeout=300)
    assert Path(where.strip()).is_relative_to(venv), f"{where} is not the installed copy"
    _run([venv / "bin" / "veille", "collect", "--help"], cwd=workdir, env=env, timeout=120)

    # One full run, as a user of an installed veille starts it: in their own folder, without
    # --warehouse. It writes the default warehouse into the folder it runs from (never into
    # site-packages, the package's parent there) and nothing else there. (A run given --warehouse
    # writes into that warehouse: the crash, concurrency and bad-corpus process tests read every
    # table, run folder and the database back from the warehouse they name.)
    veille = venv / "bin" / "veille"
    home = tmp_path / "home"
    home.mkdir()
    before = _flow_runs()
    _run([veille, "run", "--backend", "offline", "--corpus", BUNDLED_CORPUS], cwd=home, env=env, timeout=1000)
    warehouse = home / "warehouse" / "data"
    assert [p.name for p in home.iterdir()] == ["warehouse"], sorted(p.name for p in home.iterdir())
    assert [p.name for p in (home / "warehouse").iterdir()] == ["data"]
    assert not list(venv.glob("lib/python*/site-packages/warehouse")), "a run wrote into site-packages"
    (run_dir,) = (warehouse / "runs").iterdir()
    assert (run_dir / "report.md").read_text(encoding="utf-8").strip()
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert info["status"] == "completed"
    assert _flow_runs() == before + 1  # recorded on the test API it was given, not on a server of its own
    assert Path(info["settings"]["config_dir"]).is_relative_to(venv)  # the bundled grid, prices, authority

    # The views and named queries are package data too; commands given --warehouse write nothing
    # into the folder they run from.
    out = _run(
        [veille, "sql", "SELECT status FROM runs", "--format", "csv", "--warehouse", warehouse],
        cwd=workdir,
        env=env,
        timeout=300,
    )
    assert out.split() == ["status", "completed"]
    _run([veille, "runs", "--warehouse", warehouse], cwd=workdir, env=env, timeout=300)
    assert not list(workdir.iterdir()), "a command wrote into its working directory"
