"""Package data, found through importlib.resources rather than the checkout.

The bundled configuration (grid.toml, prices.toml, authority.toml) ships in ``veille/data/``; the
warehouse views in ``veille/warehouse/views/``. An installed wheel therefore reads its own copy,
from any working directory. The ``config_dir`` setting (e.g. a ``config/`` folder) overrides the
bundled configuration (see :class:`veille.settings.Settings`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["data_dir", "data_file", "package_dir"]


def package_dir(package: str, *parts: str) -> Path:
    """A file or folder of an installed package's data, as a file system path."""
    found = resources.files(package)
    for part in parts:
        found = found.joinpath(part)
    # Readers glob folders and hand paths to DuckDB and TOML loaders: a zipped install cannot do that.
    if not isinstance(found, Path):
        raise RuntimeError(f"package data {package}/{'/'.join(parts)} is not on the file system ({found!r})")
    return found


def data_dir() -> Path:
    """The bundled configuration folder (``veille/data``): grid.toml, prices.toml, authority.toml."""
    return package_dir("veille", "data")


def data_file(name: str) -> Path:
    """One bundled configuration file, e.g. ``data_file("prices.toml")``."""
    return data_dir() / name
