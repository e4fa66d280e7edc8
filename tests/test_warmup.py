"""`veille run` builds a night's per-tree caches while it waits for its Prefect API, and joins that
work before the flow starts (issue 40 item 6, veille/flows/warmup.py)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import veille.flows.warmup as warmup
import veille.language
from veille.fingerprint import code_digest
from veille.settings import Settings
from veille.tasks.clients import role_keys


@pytest.mark.parametrize("saved", [False, True])
def test_the_warm_up_fills_the_caches_a_tree_lacks_and_changes_no_key(
    monkeypatch: pytest.MonkeyPatch, saved: bool
) -> None:
    """A tree without its caches (a first night): both are built before the flow. A tree with them
    (every later night): nothing is computed ahead, so a night that uses neither (an unchanged
    night, veille.run.nightskip) does not pay for them; the keys are the same either way."""
    settings = Settings.from_params(backend="offline")
    monkeypatch.setattr(warmup, "index_saved", lambda: saved)
    monkeypatch.setattr(warmup, "model_saved", lambda: saved)
    veille.language._identifier.cache_clear()
    code_digest.cache_clear()
    warmup.start_warming(settings).join()
    assert veille.language._identifier.cache_info().currsize == (0 if saved else 1)  # the flow's first use
    assert (code_digest.cache_info().currsize > 0) is not saved
    warmed = role_keys(settings)
    code_digest.cache_clear()
    assert role_keys(settings) == warmed  # computed afresh: the same cache keys


def test_the_saved_caches_are_seen_once_a_night_has_built_them(tmp_path: Path) -> None:
    from veille.fingerprint import files_digest, index_saved
    from veille.language import load_model, model_saved

    tree = tmp_path / "veille"
    (tree / "sub").mkdir(parents=True)
    (tree / "__init__.py").write_text("from veille.sub import x\n")
    (tree / "sub" / "__init__.py").write_text("x = 1\n")
    assert not index_saved(tree)
    stamp = time.time() - 10  # older than the racy window: recorded (veille/fingerprint.py)
    for path in tree.rglob("*.py"):
        os.utime(path, (stamp, stamp))
    files_digest(list(tree.rglob("*.py")), tmp_path)  # the package folder's index, saved
    assert index_saved(tree)
    load_model()  # decompresses the model into the tree's cache when absent
    assert model_saved()


def test_a_failing_warm_up_is_left_to_the_flow(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(settings: Settings) -> dict[str, str]:
        raise OSError("read-only tree")

    unhandled: list[Any] = []
    monkeypatch.setattr(warmup, "role_keys", broken)
    monkeypatch.setattr(threading, "excepthook", unhandled.append)
    warmup.start_warming(Settings.from_params(backend="offline")).join()
    assert unhandled == []


def test_veille_run_joins_the_warm_up_once_its_api_is_there_before_the_flow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import typer
    from typer.testing import CliRunner

    import veille.flows.veille
    import veille.ops.ephemeral
    from veille.cli import run as run_commands

    app = typer.Typer()  # its own app: veille.cli's registers its commands only in main()
    run_commands.register(app)
    api_ready = threading.Event()
    order: list[str] = []

    def warm(settings: Settings) -> None:
        api_ready.wait()  # still working when the API comes: the run must wait for it
        order.append("warm-up")

    def temporary_api() -> None:
        order.append("api")
        api_ready.set()

    class _Stop(Exception):
        pass

    def fake_flow(*, return_state: bool, **params: Any) -> None:
        order.append("flow")
        raise _Stop

    monkeypatch.setattr(warmup, "_warm", warm)
    monkeypatch.setattr(veille.ops.ephemeral, "start_temporary_api", temporary_api)
    monkeypatch.setattr(veille.flows.veille, "veille_flow", fake_flow)
    CliRunner().invoke(app, ["run", "--backend", "offline"])
    assert order == ["api", "warm-up", "flow"]
