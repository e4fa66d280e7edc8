"""A fresh virtualenv that holds what a wheel's declared requirements resolve to, offline; plain pip
installs the wheel there and refuses it if anything it requires is missing.

uv (pinned in constraints.txt, what ``make install`` installs with) resolves the wheel's
requirements (``uv pip compile``, ``-c constraints.txt``) against a wheelhouse of metadata-only
wheels, one per distribution installed in this environment, so an import the wheel does not
declare, directly or through a dependency's metadata, is missing from the result. Only the
resolved distributions are then linked into the new venv's site-packages (from their RECORD: a
top-level directory that only one installed distribution has files in as a whole, a shared one
file by file), and the wheel is installed with plain ``pip install --no-index``: pip's own resolver
then checks that every requirement, declared by the wheel or by any dependency on the way
(extras, markers), is satisfied by what was linked, and fails otherwise. pip's separate
``--dry-run --report`` resolution was 4.3 s of the test's CPU (pip parses every requirement with
pyparsing), uv's 0.05 s; both gave the same 145 distributions here (2026-12-07).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

__all__ = ["metadata_wheelhouse", "pip", "populate_venv", "resolve"]


def pip(args: list[str | Path], *, cwd: Path, env: dict[str, str], timeout: int = 600) -> str:
    """``python -m pip`` of this environment (pip is a plain client: ``--python`` targets the venv)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, (
        f"pip {args[:2]} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


def _wheel_name(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _installed() -> dict[str, metadata.Distribution]:
    found: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(_wheel_name(name), dist)  # first on the path wins, as for imports
    return found


def metadata_wheelhouse(dest: Path, *, skip: str) -> Path:
    """One ``py3-none-any`` wheel per installed distribution (but ``skip``) with its METADATA only."""
    dest.mkdir(parents=True, exist_ok=True)
    for key, dist in _installed().items():
        if key == _wheel_name(skip):
            continue
        info = f"{key}-{dist.version}.dist-info"
        wheel_text = "Wheel-Version: 1.0\nGenerator: veille-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        with zipfile.ZipFile(dest / f"{key}-{dist.version}-py3-none-any.whl", "w") as zf:
            zf.writestr(f"{info}/METADATA", dist.read_text("METADATA") or "")
            zf.writestr(f"{info}/WHEEL", wheel_text)
            zf.writestr(f"{info}/RECORD", f"{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
    return dest


def resolve(
    wheel: Path, house: Path, constraints: Path, python: Path, *, cwd: Path, env: dict[str, str]
) -> dict[str, str]:
    """Names and versions uv resolves for ``wheel`` (offline, from ``house``) for the interpreter
    ``python``'s markers; the wheel's own distribution is left out."""
    project = wheel.name.split("-")[0]
    requirement, pinned = cwd / "wheel-requirement.in", cwd / "wheel-resolution.txt"
    requirement.write_text(f"{project} @ {wheel.resolve().as_uri()}\n", encoding="utf-8")
    uv = Path(sys.executable).with_name("uv")  # the venv's, pinned in constraints.txt
    proc = subprocess.run(
        [
            *(str(uv), "pip", "compile", "--quiet", "--offline", "--no-index"),
            *("--find-links", str(house), "-c", str(constraints), "--python", str(python)),
            *("--no-header", "--no-annotate", "--cache-dir", str(cwd / "uv-cache")),
            *(str(requirement), "-o", str(pinned)),
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, (
        f"uv pip compile exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    names: dict[str, str] = {}
    for line in pinned.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and not name.startswith("#"):
            names[_wheel_name(name)] = version.strip()
    return names


def _owners() -> dict[str, set[str]]:
    """For each top-level entry of the installed distributions' RECORDs, the distributions listing files there."""
    owners: dict[str, set[str]] = {}
    for key, dist in _installed().items():
        for entry in dist.files or ():
            if ".." not in entry.parts and len(entry.parts) > 1:
                owners.setdefault(entry.parts[0], set()).add(key)
    return owners


def populate_venv(purelib: Path, names: dict[str, str], *, skip: str) -> int:
    """Link the files of the resolved distributions into ``purelib``; returns how many were linked.

    A top-level directory that only one installed distribution lists files in (``numpy/``,
    ``prefect/``) is linked whole, with its byte code: what it holds is that distribution's and no
    other's. A directory several distributions share (a namespace package such as ``google/``, or
    ``bin/``-like data trees) is linked file by file, so that an unresolved distribution's modules
    never become importable through a shared parent."""
    installed, owners, linked = _installed(), _owners(), 0
    for name, version in names.items():
        if name == _wheel_name(skip):
            continue
        dist = installed[name]
        assert dist.version == version, f"{name}: pip resolved {version}, this environment has {dist.version}"
        root = Path(str(dist.locate_file("")))
        for entry in dist.files or ():
            if ".." in entry.parts or "__pycache__" in entry.parts:
                continue  # scripts outside site-packages; byte code is linked by directory below
            top = entry.parts[0]
            if len(entry.parts) > 1 and owners.get(top) == {name}:
                source, target = root / top, purelib / top  # the whole directory, once
            else:
                source, target = root / entry, purelib / entry
            if not source.exists() or target.exists() or target.is_symlink():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            cache = source.parent / "__pycache__"
            if source.is_file() and cache.is_dir() and not (target.parent / "__pycache__").exists():
                os.symlink(cache, target.parent / "__pycache__")  # no recompilation of the whole tree
            os.symlink(source, target)
            linked += 1
    return linked
