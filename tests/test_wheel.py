"""veille installs as a package: build the wheel, install it (not editable), run it from elsewhere.

Offline: the wheel is built with the project's own setuptools (``--no-build-isolation --no-index``)
and installed with ``--no-deps`` into a temporary venv that reuses this environment's
site-packages through a ``.pth`` line (the dependencies are not reinstalled). That line only adds
the directory: the editable install's own ``.pth`` hook there is not run, so the checkout is not
on the path, and the run starts in an empty folder: whatever it reads (configuration, views,
queries) must come from the installed package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

# A full offline run on a shared machine.
pytestmark = [pytest.mark.process, pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_CORPUS = ROOT / "corpus"


def _env(prefect_home: Path) -> dict[str, str]:
    # Nothing of this session's Prefect (its test API), settings, keys or path reaches the child.
    dropped = {"GEMINI_API_KEY", "GOOGLE_API_KEY", "PYTHONPATH", "VIRTUAL_ENV", "VEILLE_CONFIG"}
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "VEILLE_")) and k not in dropped
    }
    env.update(
        PREFECT_HOME=str(prefect_home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT="false",
        DO_NOT_TRACK="1",
        PIP_NO_INPUT="1",
        VEILLE_PREFECT_SERVER="temporary",  # no background server left behind (test_shared_api.py)
    )
    return env


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
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            dist,
            ".",
        ],
        cwd=src,
        env=env,
        timeout=600,
    )
    (wheel,) = dist.glob("veille-*.whl")
    return wheel


def _venv_with_wheel(venv: Path, wheel: Path, env: dict[str, str]) -> Path:
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=venv.parent, env=env, timeout=300)
    python = venv / "bin" / "python"
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        cwd=venv.parent,
        env=env,
        timeout=60,
    ).strip()
    (Path(purelib) / "_veille_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    uv = Path(sys.executable).with_name("uv")
    if uv.exists():  # installed by `make install` (pinned in constraints.txt)
        install = [uv, "pip", "install", "--offline", "--no-deps", "--reinstall", "--python", python, wheel]
    else:  # pip run inside the target would see this environment's editable veille: ignore it
        install = [sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps"]
        install += ["--ignore-installed", wheel]
    _run(install, cwd=venv.parent, env=env, timeout=300)
    return python


def test_the_wheel_installs_and_runs_from_another_folder(tmp_path: Path) -> None:
    env = _env(tmp_path / "prefect-home")
    wheel = _build_wheel(_source_copy(tmp_path / "src"), tmp_path / "dist", env)
    venv = tmp_path / "venv"
    python = _venv_with_wheel(venv, wheel, env)
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()

    where = _run(
        [
            python,
            "-c",
            "import json, veille, flows, tasks; print(json.dumps([m.__file__ for m in (veille, flows, tasks)]))",
        ],
        cwd=workdir,
        env=env,
        timeout=120,
    )
    for module_file in json.loads(where):
        assert Path(module_file).is_relative_to(venv), f"{module_file} is not the installed copy"

    warehouse = tmp_path / "warehouse"
    veille = venv / "bin" / "veille"
    run = [veille, "run", "--backend", "offline", "--corpus", BUNDLED_CORPUS, "--warehouse", warehouse]
    _run(run, cwd=workdir, env=env, timeout=1000)
    (run_dir,) = (warehouse / "runs").iterdir()
    assert (run_dir / "report.md").read_text(encoding="utf-8").strip()
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert info["status"] == "completed"
    assert Path(info["settings"]["config_dir"]).is_relative_to(venv)  # the bundled grid, prices, authority

    # The views and named queries are package data too.
    out = _run(
        [veille, "sql", "SELECT status FROM runs", "--format", "csv", "--warehouse", warehouse],
        cwd=workdir,
        env=env,
        timeout=300,
    )
    assert out.split() == ["status", "completed"]
    _run([veille, "runs", "--warehouse", warehouse], cwd=workdir, env=env, timeout=300)
    assert not list(workdir.iterdir()), "the run wrote into its working directory"
