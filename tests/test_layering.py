"""The layering rules of docs/architecture.md hold (import-linter contracts in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(exe), "--no-logo", "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


def test_every_layering_contract_is_kept() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_a_model_layer_importing_prefect_operations_is_caught(tmp_path: Path) -> None:
    # The same contract on a two-module copy of the shape: the check can fail.
    pkg = tmp_path / "veille"
    (pkg / "models").mkdir(parents=True)
    (pkg / "ops").mkdir()
    for init in (pkg / "__init__.py", pkg / "models" / "__init__.py", pkg / "ops" / "__init__.py"):
        init.write_text("")
    (pkg / "models" / "caller.py").write_text("from veille.ops import slot\n")
    (pkg / "ops" / "__init__.py").write_text("slot = None\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.importlinter]\nroot_packages = ["veille"]\n\n[[tool.importlinter.contracts]]\n'
        'id = "models-seam"\nname = "seam"\ntype = "forbidden"\nsource_modules = ["veille.models"]\n'
        'forbidden_modules = ["veille.ops"]\n'
    )
    result = _lint_imports(tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert result.returncode != 0
    assert "veille.models.caller -> veille.ops" in result.stdout


def _imported_roots(path: Path) -> set[str]:
    """Top-level packages ``path`` imports (absolute imports, at any depth of the module)."""
    import ast

    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def test_bench_and_production_import_nothing_from_tests() -> None:
    # Test hooks and fakes stay out of production; the benchmarks share support code through
    # testkit/, never through tests/ (issue 28 item 5).
    production = [p for pkg in ("veille", "tasks", "flows") for p in (ROOT / pkg).rglob("*.py")]
    offenders = [str(p.relative_to(ROOT)) for p in production if _imported_roots(p) & {"tests", "testkit"}]
    offenders += [
        str(p.relative_to(ROOT)) for p in (ROOT / "bench").rglob("*.py") if "tests" in _imported_roots(p)
    ]
    offenders += [
        str(p.relative_to(ROOT)) for p in (ROOT / "testkit").rglob("*.py") if "tests" in _imported_roots(p)
    ]
    assert len(production) > 100 and offenders == [], offenders


def test_the_import_scan_sees_a_nested_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from tests.fake import X\n    return X\n", encoding="utf-8")
    assert "tests" in _imported_roots(module)
