"""`veille -h` reads like a command line's help (issue 39 item 4): ``-h`` works everywhere, ``--version``
prints the package's version, no Python type tag (``<bool>``, ``<str>``) in any command's help, and a
default the settings decide is shown as the folder they resolve to, the same on every command."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from veille.cli import _register_all, app

_TYPE_TAG = re.compile(r"<(bool|str|int|float|path|file|directory|text|[a-z]+ range|list\[[^\]]*\])>")


def _commands() -> list[list[str]]:
    """Every command path of the app (``[]`` for the app itself), groups included."""
    _register_all()
    root = typer.main.get_command(app)
    paths: list[list[str]] = [[]]
    stack: list[tuple[list[str], object]] = [([], root)]
    while stack:
        prefix, command = stack.pop()
        for name, sub in getattr(command, "commands", {}).items():
            paths.append([*prefix, name])
            stack.append(([*prefix, name], sub))
    return paths


def _help(args: list[str], env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "400", "TERMINAL_WIDTH": "400", **(env or {})})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.replace("│", " ").split())


def test_every_command_answers_h_without_type_tags() -> None:
    paths = _commands()
    assert len(paths) > 10 and ["run"] in paths and ["warehouse", "upgrade"] in paths
    for path in paths:
        short = _help([*path, "-h"])
        assert "Usage:" in short and short == _help([*path, "--help"]), path
        assert _TYPE_TAG.search(short) is None, (path, _TYPE_TAG.search(short))


def test_version_prints_the_package_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"veille {version('veille')}"


@pytest.mark.parametrize("command", [["run"], ["ingest"], ["sql"], ["clean"], ["warehouse", "upgrade"]])
def test_the_warehouse_default_is_the_settings_value(command: list[str], tmp_path: Path) -> None:
    place = tmp_path / "elsewhere" / "wh"
    text = _help([*command, "-h"], env={"VEILLE_WAREHOUSE_DIR": str(place)})
    assert f"[default: {place}]" in text, text
    assert "settings.warehouse_dir" not in text and "warehouse/data/" not in text


def test_the_corpus_default_is_the_settings_value(tmp_path: Path) -> None:
    text = _help(["run", "-h"], env={"VEILLE_CORPUS_DIR": str(tmp_path / "watch")})
    assert f"[default: {tmp_path / 'watch'}]" in text, text


def test_a_bad_setting_still_prints_help(tmp_path: Path) -> None:
    """Help is no place to report a setting: it prints, without the default it cannot resolve."""
    text = _help(["run", "-h"], env={"VEILLE_MAX_ROUNDS": "not a number"})
    assert "--warehouse" in text and "[default: /" not in text
