"""mypy does not analyse some third-party packages (pyproject.toml, `follow_imports = "skip"`): what
they export is Any to it. That is only sound while veille and flows/ never import them themselves, so
that every call veille makes is still checked against an analysed signature. This test reads the skip
list from pyproject.toml and every import of veille/ and flows/ (at any depth: in functions, under
TYPE_CHECKING, and `importlib.import_module` with a literal name)."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("veille", "flows")


def skipped_patterns(pyproject: Path) -> list[str]:
    """The module patterns of the mypy overrides that skip following imports."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["mypy"]
    patterns: list[str] = []
    for override in config.get("overrides", []):
        if override.get("follow_imports") in ("skip", "silent"):
            modules = override["module"]
            patterns += [modules] if isinstance(modules, str) else modules
    return patterns


def is_skipped(module: str, patterns: list[str]) -> bool:
    """mypy's matching: `a.*` is `a` and its submodules, `a` is `a` alone."""
    for pattern in patterns:
        if pattern.endswith(".*"):
            base = pattern[:-2]
            if module == base or module.startswith(base + "."):
                return True
        elif module == pattern:
            return True
    return False


def imported_modules(source: str) -> Iterator[str]:
    """Every absolute module name the source imports, wherever the import statement is."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            # `from a import b` may import the submodule a.b
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value


def test_the_matching_is_mypys() -> None:
    patterns = ["polars.*", "ruamel.*", "exact"]
    assert is_skipped("polars", patterns) and is_skipped("polars.frame", patterns)
    assert is_skipped("ruamel.yaml", patterns) and is_skipped("exact", patterns)
    assert not is_skipped("polarsx", patterns) and not is_skipped("exact.sub", patterns)
    assert list(imported_modules("def f():\n    import polars.frame as p\n")) == ["polars.frame"]
    assert "dask.array" in set(imported_modules("from dask import array\n"))
    assert list(imported_modules("importlib.import_module('redis')\n")) == ["redis"]
    assert list(imported_modules("from . import sqlalchemy\n")) == []  # relative: veille's own


def test_veille_never_imports_a_package_mypy_does_not_analyse() -> None:
    patterns = skipped_patterns(PROJECT_ROOT / "pyproject.toml")
    assert patterns, "no skipped package: this test would check nothing"
    found = sorted(
        f"{path.relative_to(PROJECT_ROOT)}: {module}"
        for package in CHECKED
        for path in (PROJECT_ROOT / package).rglob("*.py")
        for module in imported_modules(path.read_text(encoding="utf-8"))
        if is_skipped(module, patterns)
    )
    assert found == [], (
        "mypy does not analyse these packages (pyproject.toml, [[tool.mypy.overrides]] follow_imports = "
        f"'skip'), so their types are Any to it: take them off the list or do not import them: {found}"
    )
