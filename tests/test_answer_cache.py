"""One answer cache keyed by one computed fingerprint (issue 38 item 5).

Both layers of the answer cache key with ``veille.models.cache.fingerprint``: the response cache
(``<warehouse>/cache``, one entry per model request) and the Prefect task layer
(``<warehouse>/prefect-results``: ``plan``, ``analyse`` and ``ask``, ``veille.tasks.answer_key``).
The properties: the fingerprint depends on values only (never on construction order) and on every
value; the task key is the fingerprint of the task's data parameters; a second identical night
sends no model request, whichever layer is left; an edit to a role's prompt (its module's source)
sends that role's requests again and no other's. A retried night rerunning only its failed branch
with no request for the others: ``tests/test_faults_flow.py::
test_branch_failing_after_its_retries_gives_a_partial_report_and_the_retry_reruns_only_it``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import veille.models.cache
import veille.tasks.clients
import veille.tasks.nightskip
from testkit.fake_gemini import FakeGemini
from testkit.gemini_script import role_of
from tests.faultkit import GeminiFlow, gemini_flow
from veille.models.base import ModelRequest
from veille.models.cache import cache_key, fingerprint
from veille.roles.analyst import Findings
from veille.roles.writer import WRITER
from veille.run.inputs import RESULTS_DIRNAME
from veille.run.nightskip import NIGHT_FILE
from veille.tasks.analyse import ANALYSE_CACHE_POLICY
from veille.tasks.answer_key import AnswerKey
from veille.tasks.asks import ASK_CACHE_POLICY
from veille.tasks.plan import PLAN_CACHE_POLICY

MARKER = "[consigne-modifiée]"

leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
        | st.frozensets(st.text(max_size=6), max_size=4)
    ),
    max_leaves=12,
)
materials = st.dictionaries(st.text(max_size=6), values, min_size=1, max_size=5)
# JSON values only: a set and a list of the same items are one value to the key (a field's type is
# fixed by its model, so they never compete for one field).
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _rebuilt(value: Any) -> Any:
    """An equal value built in another order: mappings reversed, sets rebuilt from reversed items."""
    if isinstance(value, dict):
        return {k: _rebuilt(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, frozenset):
        return frozenset(reversed([_rebuilt(v) for v in sorted(value)]))
    if isinstance(value, list):
        return [_rebuilt(v) for v in value]
    return value


@given(materials)
def test_the_fingerprint_depends_on_values_not_on_construction_order(material: dict[str, Any]) -> None:
    assert fingerprint(_rebuilt(material)) == fingerprint(material)


@given(st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=5), st.data())
def test_the_fingerprint_changes_with_any_entry(material: dict[str, Any], data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(material)))
    other = data.draw(
        json_values.filter(lambda v: v != material[name] or type(v) is not type(material[name]))
    )
    assert fingerprint({**material, name: other}) != fingerprint(material)
    assert fingerprint({k: v for k, v in material.items() if k != name}) != fingerprint(material)


@given(
    st.dictionaries(st.sampled_from(["data", "model_key", "cache_scope", "role_name"]), values, min_size=1)
)
def test_the_task_key_is_the_fingerprint_of_its_data_parameters(data: dict[str, Any]) -> None:
    live = {"client": object(), "role": object()}  # not data: never in the key
    key = ASK_CACHE_POLICY.compute_key(None, {**data, **live}, {})  # type: ignore[arg-type]
    assert key == fingerprint({"task": "ask", "inputs": data})
    # Another task over the same parameters has another key: tasks never serve each other's results.
    assert AnswerKey(task="plan").compute_key(None, data, {}) != AnswerKey(task="ask").compute_key(
        None, data, {}
    )  # type: ignore[arg-type]


def test_both_layers_key_through_the_one_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    for policy, task in (
        (PLAN_CACHE_POLICY, "plan"),
        (ANALYSE_CACHE_POLICY, "analyse"),
        (ASK_CACHE_POLICY, "ask"),
    ):
        assert isinstance(policy, AnswerKey) and policy.task == task
        assert policy.key_storage is None  # the keys live with the results, never in a folder of the cwd
        assert "client" in policy.exclude and not {"cache_scope", "model_key"} & set(policy.exclude)
    seen: list[dict[str, Any]] = []

    def spy(material: Any) -> str:
        seen.append(dict(material))
        return fingerprint(material)

    monkeypatch.setattr(veille.models.cache, "fingerprint", spy)
    request = ModelRequest(role="writer", model="m", system="s", prompt="p", output_schema=Findings)
    assert cache_key(request, "gemini") == fingerprint(seen[-1]) and seen[-1]["prompt"] == "p"
    parameters = {"data": Findings(findings=[]), "model_key": "k", "cache_scope": "", "client": object()}
    key = ASK_CACHE_POLICY.compute_key(None, parameters, {})  # type: ignore[arg-type]
    assert key == fingerprint(seen[-1]) and seen[-1]["task"] == "ask" and len(seen) == 2


# --- nights on the fake Gemini -----------------------------------------------------------------


@pytest.fixture(name="flow")
def _flow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiFlow]:
    with gemini_flow(tmp_path, monkeypatch) as flow:
        yield flow


def _text(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


def _roles(server: FakeGemini) -> list[str]:
    return [role_of(r.body) for r in server.requests]


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_a_second_identical_night_sends_no_request_whichever_layer_is_left(
    flow: GeminiFlow, tmp_path: Path
) -> None:
    server, _faults, run = flow
    warehouse = tmp_path / "warehouse"
    first = run()
    assert first.state.is_completed(), first.state.message
    assert {"planner", "analyst", "writer"} <= set(_roles(server))

    # Each night runs its steps: with the night before reusable, the whole-night skip
    # (veille.run.nightskip, tests/test_night_skip.py) would answer before either layer is asked.
    _forget_nights(warehouse)
    server.reset()
    assert run().state.is_completed() and _roles(server) == []

    # The response cache alone (the task layer emptied) answers every request of the night.
    shutil.rmtree(warehouse / RESULTS_DIRNAME)
    _forget_nights(warehouse)
    server.reset()
    assert run().state.is_completed() and _roles(server) == []

    # The task layer alone (the response cache emptied) spares every model call of the night.
    shutil.rmtree(warehouse / "cache")
    _forget_nights(warehouse)
    server.reset()
    assert run().state.is_completed() and _roles(server) == []


def _forget_nights(warehouse: Path) -> None:
    """No earlier night may be reused whole (its night.json gone): tonight runs every step."""
    for record in warehouse.rglob(NIGHT_FILE):
        record.unlink()


@pytest.fixture(name="edited_writer")
def _edited_writer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The writer's prompt edited as in its source file: the prompt sent changes, and so do the
    digest of ``veille/roles/writer.py`` that its model key holds and the package's digest in the
    night's key (veille.run.nightkey: the night is not skipped). A real edit changes all three."""
    original_digest, original_tree = veille.tasks.clients.code_digest, veille.tasks.nightskip.code_tree_digest

    def digest(modules: tuple[str, ...], data_files: tuple[Path, ...] = ()) -> str:
        edited = "veille.roles.writer" in modules
        return original_digest(modules, data_files) + ("+edited" if edited else "")

    monkeypatch.setattr(veille.tasks.clients, "code_digest", digest)
    monkeypatch.setattr(veille.tasks.nightskip, "code_tree_digest", lambda: original_tree() + "+edited")
    build_prompt = WRITER.build_prompt
    object.__setattr__(
        WRITER, "build_prompt", lambda data: f"{build_prompt(data)}\n{MARKER}"
    )  # Role is frozen
    try:
        yield
    finally:
        object.__setattr__(WRITER, "build_prompt", build_prompt)


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_an_edited_role_prompt_sends_that_role_again_and_no_other(
    flow: GeminiFlow, request: pytest.FixtureRequest
) -> None:
    server, _faults, run = flow
    assert run().state.is_completed()
    assert not any(MARKER in _text(r.body) for r in server.requests)

    request.getfixturevalue("edited_writer")
    server.reset()
    edited = run()
    assert edited.state.is_completed(), edited.state.message
    writers = [r for r in server.requests if role_of(r.body) == "writer"]
    assert writers and all(MARKER in _text(r.body) for r in writers)
    assert not {"planner", "analyst"} & set(_roles(server))  # their answers still served


def test_an_edited_data_file_changes_every_model_backends_role_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The steps read word lists from veille/data (dates, request, numbers, coverage): on a model
    backend too, an edit there must give the roles another key, or a stale plan is served."""
    from veille.fingerprint import code_digest
    from veille.settings import Settings
    from veille.tasks.clients import model_key

    data = tmp_path / "data"
    data.mkdir()
    words = data / "words.toml"
    words.write_text('cue = ["publié le"]\n', encoding="utf-8")
    monkeypatch.setattr(veille.tasks.clients, "data_dir", lambda: data)
    settings = Settings(backend="gemini", warehouse_dir=tmp_path / "w")
    before = {role: model_key(settings, role) for role in ("planner", "analyst")}
    code_digest.cache_clear()
    assert {role: model_key(settings, role) for role in ("planner", "analyst")} == before
    words.write_text('cue = ["publié le", "mis à jour le"]\n', encoding="utf-8")
    code_digest.cache_clear()
    after = {role: model_key(settings, role) for role in ("planner", "analyst")}
    assert all(after[role] != before[role] for role in before)
