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
