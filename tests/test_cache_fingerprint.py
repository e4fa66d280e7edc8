"""Caches key on the code that produced the result (issue 28 item 3): no version to bump by hand.

The digest of the offline engine follows its source (a copy edited in one file gets another digest,
an edit outside the engine's import closure does not), and a rerun whose engine changed does not
serve the earlier plan, branches or answers: the changed output reaches the report, 0 stale hits.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import veille
import veille.offline
import veille.offline.analyst
from testkit.flowkit import write_corpus
from veille.fingerprint import files_digest, import_closure
from veille.roles.analyst import AnalystInput, Findings

MARKER = "[moteur-modifié]"


def _copy_package(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    shutil.copytree(
        Path(veille.__file__).parent, root / "veille", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return root


def _engine_digest(root: Path) -> str:
    return files_digest(import_closure(["veille.offline"], root=root / "veille"), root)


def test_the_engine_digest_follows_its_source_and_only_it(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    files = import_closure(["veille.offline"], root=root / "veille")
    names = {str(p.relative_to(root)) for p in files}
    # The engine, the role inputs it answers and what they import; not the CLI or the warehouse.
    assert {"veille/offline/analyst.py", "veille/offline/writer.py", "veille/roles/analyst.py"} <= names
    assert not any(n.startswith(("veille/cli/", "veille/warehouse/", "veille/models/")) for n in names)
    before = _engine_digest(root)
    assert _engine_digest(root) == before  # deterministic

    with (root / "veille" / "cli" / "__init__.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# an edit outside the engine\n")
    assert _engine_digest(root) == before

    with (root / "veille" / "offline" / "writer.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# an edit inside the engine\n")
    edited = _engine_digest(root)
    assert edited != before

    with (root / "veille" / "roles" / "delimit.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# a module the engine reaches through the roles\n")
    assert _engine_digest(root) not in (before, edited)


def test_the_closure_follows_runtime_imports_and_neither_parses_nor_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "veille"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__", "a", "b", "c", "d", "e", "sub/__init__", "sub/f"):
        (pkg / f"{name}.py").write_text("", encoding="utf-8")
    (pkg / "a.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import veille.b\n"
        "if TYPE_CHECKING:\n    from veille import c\nelse:\n    from . import d\n"
        "def later():\n    from .sub import f\n    return f\n",
        encoding="utf-8",
    )
    (pkg / "sub" / "f.py").write_text("from ..e import something\n", encoding="utf-8")
    # CPython 3.11's ast.parse fails when another thread parses at once (Prefect, Dask workers do):
    # the closure must not need it.
    import ast

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("ast.parse called")

    monkeypatch.setattr(ast, "parse", refuse)
    # Nor compiling (issue 40: disassembling the closure at every run cost 1.85 s of 6.4 s).
    import builtins

    def refuse_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("compile called")

    monkeypatch.setattr(builtins, "compile", refuse_compile)
    names = {str(p.relative_to(tmp_path)) for p in import_closure(["veille.a"], root=pkg)}
    # c is imported only for annotations; d on the else branch; f from a function body; e from f.
    assert names == {
        "veille/__init__.py", "veille/a.py", "veille/b.py", "veille/d.py",
        "veille/sub/__init__.py", "veille/sub/f.py", "veille/e.py",
    }  # fmt: skip


def _findings(folder: Path) -> list[str]:
    data: dict[str, Any] = json.loads((folder / "findings.json").read_text(encoding="utf-8"))
    return [f["statement"] for branch in data.values() for f in branch.get("findings", [])]


def _roles_called(folder: Path) -> list[str]:
    path = folder / "calls.jsonl"  # absent when the run made no call
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line)["role"] for line in lines if line.strip()]


@pytest.mark.usefixtures("prefect_harness")
def test_a_rerun_picks_up_a_changed_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from veille.flows.veille import veille_flow

    corpus = write_corpus(tmp_path / "corpus")
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))

    def run() -> Path:
        state = veille_flow(corpus=str(corpus), backend="offline", return_state=True)
        assert state.is_completed(), state.message
        return Path(state.result())

    first = run()
    assert _findings(first) and not any(MARKER in s for s in _findings(first))
    assert "analyst" in _roles_called(first)

    # The engine changes: its analyst marks every finding, and its version (a digest of its source
    # in a real edit) changes with it.
    # The analyst function where role_functions takes it when the engine is built (on its first
    # answer, veille.backends.offline_backend), so the edit reaches the night as a real one would.
    original, version = veille.offline.analyst.analyse, veille.offline.engine_version

    def marked(data: AnalystInput, authority: Any) -> Findings:
        out = original(data, authority)
        return out.model_copy(
            update={
                "findings": [
                    f.model_copy(update={"statement": f"{MARKER} {f.statement}"}) for f in out.findings
                ]
            }
        )

    monkeypatch.setattr(veille.offline.analyst, "analyse", marked)
    monkeypatch.setattr(veille.offline, "engine_version", lambda path: version(path) + "+marked")

    second = run()
    statements = _findings(second)
    assert statements and all(s.startswith(MARKER) for s in statements)  # 0 stale branches
    assert MARKER in (second / "report.md").read_text(encoding="utf-8")  # through writer and review
    assert _roles_called(second).count("analyst") == _roles_called(first).count("analyst") > 0

    # Same engine again: everything comes from the caches, the marker included.
    third = run()
    assert all(s.startswith(MARKER) for s in _findings(third))
    assert "analyst" not in _roles_called(third) and "planner" not in _roles_called(third)
