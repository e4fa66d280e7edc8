"""Incremental nights for the report (issue 27 item 4): a validated night's sections are kept by the
digest of their inputs; the next night's writer writes only the axes whose findings changed, the
critic reads those parts, and the kept sections are those a writer asked for every axis writes (in
id space) on the same night.

Through the real google-genai SDK against the fake Gemini server, with a writer that writes each axis
from its own findings (testkit.gemini_script.findings_dossier)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from testkit.fake_gemini import FakeGemini, RecordedRequest
from testkit.gemini_script import findings_dossier, role_of
from tests.test_incremental_flow import BUNDLED, NEW
from tests.test_nightly_news import _catalogue_planner
from tests.test_review_properties import GRID, DrawingClient, _writer_input, assert_report_holds
from veille.dossier import KEY_POINTS_SECTION, AxisSection, CitedText, Dossier, KeyPoint
from veille.roles.base import In, Out, Role
from veille.steps.finalize import finalize_report
from veille.steps.review import KEPT_NOTE, review_loop
from veille.steps.write import write_draft
from veille.textstats import split_sections


@pytest.fixture()
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        fake.responder = _catalogue_planner(writer=findings_dossier)
        yield fake


def _prompt(request: RecordedRequest) -> str:
    return "".join(p.get("text", "") for p in request.body["contents"][0]["parts"])


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _sections_in_ids(folder: Path) -> dict[str, str]:
    """The shipped report's axes (### title -> its points), citations written as document ids."""
    ids = {s["number"]: s["id"] for s in _json(folder / "sources.json")}
    points = split_sections((folder / "report.md").read_text(encoding="utf-8"))[KEY_POINTS_SECTION]
    out: dict[str, str] = {}
    for block in re.split(r"^### ", points, flags=re.MULTILINE)[1:]:
        title, _, body = block.partition("\n")
        out[title] = re.sub(r"\[(\d+)\]", lambda m: f"[{ids[int(m.group(1))]}]", body.strip())
    return out


@pytest.mark.usefixtures("prefect_harness")
@pytest.mark.slow
def test_one_new_document_rewrites_its_axis_only_and_keeps_the_others_as_from_scratch(
    tmp_path: Path, gemini: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veille.flows.veille import veille_flow

    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED, corpus, ignore=shutil.ignore_patterns("sources.toml", ".collect-state.json"))
    for name, value in {
        "GEMINI_API_KEY": "test-key",
        "VEILLE_GEMINI_BASE_URL": gemini.base_url,
        "VEILLE_GEMINI_API_VERSION": "v1beta",
        "VEILLE_HTTP_RETRY_INITIAL_DELAY_S": "0.01",
    }.items():
        monkeypatch.setenv(name, value)

    def night(warehouse: Path) -> tuple[Path, list[RecordedRequest]]:
        before = len(gemini.requests)
        state = veille_flow(corpus=str(corpus), backend="gemini", warehouse=str(warehouse), return_state=True)
        assert state.is_completed(), state.message
        return Path(state.result()), gemini.requests[before:]

    first, _ = night(tmp_path / "wh")
    assert _json(first / "review.json")["validated"]  # only a validated night's sections are kept
    assert (tmp_path / "wh" / "cache" / "sections.sqlite").is_file()

    # The same history without the kept sections: there the writer writes every axis tonight.
    shutil.copytree(tmp_path / "wh", tmp_path / "scratch")
    (tmp_path / "scratch" / "cache" / "sections.sqlite").unlink()
    (corpus / "docs" / "doc-90.md").write_text(NEW, encoding="utf-8")
    second, requests = night(tmp_path / "wh")
    # The plan is kept stable (veille.steps.plan_stable): one branch receives doc-90, no other moves.
    before = {s["id"]: set(s["doc_ids"]) for s in _json(first / "plan.json")["sub_tasks"]}
    after = {s["id"]: set(s["doc_ids"]) for s in _json(second / "plan.json")["sub_tasks"]}
    changed = sorted(i for i in after if after[i] != before.get(i))
    assert len(changed) == 1 and after[changed[0]] - before.get(changed[0], set()) == {"doc-90"}, (
        before,
        after,
    )
    assert {i: docs - {"doc-90"} for i, docs in after.items()} == before
    calls = [json.loads(line) for line in (second / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    roles = [c["role"] for c in calls if not c.get("cache_hit")]
    assert "planner" not in roles, roles  # the previous plan is reused: no planner call
    # Only the receiving branch calls a model again, incrementally (it only gained a document).
    assert roles.count("analyst_update") == 1 and "analyst" not in roles, (roles, changed)
    assert roles.count("writer") == 1, roles
    assert "reviser" not in roles and roles.count("critic") == 1, roles  # validated on the first round

    # The writer is asked for the changed axes only; the others are named as kept.
    [writer] = [r for r in requests if role_of(r.body) == "writer"]
    prompt = _prompt(writer)
    assert re.findall(r"^### (st-\d+) \(axe", prompt, flags=re.MULTILINE) == changed
    assert "Axes inchangés" in prompt and "Conclusions de la nuit précédente" in prompt
    schema = json.dumps(writer.body["generationConfig"]["responseJsonSchema"])
    others = [s["id"] for s in _json(second / "plan.json")["sub_tasks"] if s["id"] not in changed]
    assert others and not any(f'"{axis}"' in schema for axis in others)  # it cannot write a kept axis

    # The critic reads the rewritten parts; the kept axes are marked unchanged, not shown again.
    [critic] = [r for r in requests if role_of(r.body) == "critic"]
    assert _prompt(critic).count(KEPT_NOTE) == len(others)
    assert "doc-90" in _prompt(critic)  # the new finding, in the rewritten axis

    # Every axis, kept or rewritten, is what the writer ships when asked for every axis on the same
    # night (same stable plan and findings). Not a run from an empty warehouse: that one settles
    # the plan afresh, and the corpus-relative measure may move documents that did not change —
    # what veille.steps.plan_stable exists to prevent (tests/test_plan_stable_properties.py).
    scratch, scratch_requests = night(tmp_path / "scratch")
    assert _json(scratch / "plan.json")["sub_tasks"] == _json(second / "plan.json")["sub_tasks"]
    [full_writer] = [r for r in scratch_requests if role_of(r.body) == "writer"]
    assert sorted(re.findall(r"^### (st-\d+) \(axe", _prompt(full_writer), flags=re.MULTILINE)) == sorted(
        after
    )
    incremental, fresh = _sections_in_ids(second), _sections_in_ids(scratch)
    assert list(incremental) == list(fresh) and len(incremental) == len(others) + len(changed)
    assert incremental == fresh
    shipped = (second / "report.md").read_text(encoding="utf-8")
    assert "[doc-" not in shipped and "doc-90" in json.dumps(_json(second / "sources.json"))


# --- whatever the models answer on an incremental night (no Prefect) -----------------------------


class _RecordingClient(DrawingClient):
    """Draws every answer from the role's per-request schema, and keeps the inputs it was given."""

    def __init__(self, data: st.DataObject) -> None:
        super().__init__(data)
        self.inputs: list[tuple[str, Any]] = []

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> Any:
        self.inputs.append((role.name, data))
        return super().ask(role, data, subtask_id=subtask_id)


@hyp_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    n_sources=st.integers(min_value=2, max_value=6),
    n_axes=st.integers(min_value=2, max_value=4),
    max_rounds=st.integers(min_value=1, max_value=3),
)
def test_any_answers_on_an_incremental_night_keep_the_kept_axes_and_the_guarantees(
    data: st.DataObject, n_sources: int, n_axes: int, max_rounds: int
) -> None:
    full = _writer_input(n_sources, n_axes)
    axes = list(full.axes)
    kept_ids = data.draw(st.lists(st.sampled_from(axes), min_size=1, max_size=n_axes - 1, unique=True))
    numbers = [s.number for s in full.sources]
    kept = {
        axis: AxisSection(
            axis=axis,
            points=[
                KeyPoint(text=f"Kestrel : point gardé {i} de {axis}.", citations=[n])
                for i, n in enumerate(data.draw(st.lists(st.sampled_from(numbers), min_size=1, max_size=3)))
            ],
        )
        for axis in kept_ids
    }
    previous = Dossier(synthesis=[CitedText(text="Kestrel mène.", citations=[numbers[0]])])
    client = _RecordingClient(data)
    dossier, _ = write_draft(client, full.model_copy(update={"previous": previous}), kept)

    [(role, asked)] = client.inputs
    assert role == "writer" and set(asked.axes) == set(axes) - set(kept_ids)  # changed axes only
    assert set(asked.kept_axes) == set(kept_ids) and asked.previous == previous
    assert all(f.subtask_id not in kept for f in asked.findings)
    assert [s.axis for s in dossier.sections] == axes  # every axis, in code's order
    for section in dossier.sections:
        if section.axis in kept:  # the kept section stands, whatever the model wrote for it
            assert {p.text for p in section.points} <= {p.text for p in kept[section.axis].points}

    outcome = review_loop(
        client, dossier, grid=GRID, sources=full.sources, request="Comparer.", max_rounds=max_rounds,
        axes=full.axes, kept=kept_ids,
    )  # fmt: skip
    for role, given_input in client.inputs[1:]:
        if role == "reviser":  # rewritten parts only: those the instructions point at (review_scope)
            assert set(given_input.axes) <= set(axes) - set(kept_ids)
        if role == "critic":  # the kept axes marked unchanged, their points not shown
            assert given_input.draft.count(KEPT_NOTE) == len(kept_ids)
            assert "point gardé" not in given_input.draft
    final = finalize_report("Kestrel ?", outcome.final_dossier, full.sources, full.axes)
    assert_report_holds(final.markdown, final.sources, full.sources, list(full.axes.values()))
    assert final.removed_orphans == []
    assert len(outcome.rounds) <= max_rounds
    assert [r for r, _ in client.inputs].count("reviser") <= max_rounds - 1
    for section in outcome.final_dossier.sections:
        if section.axis in kept:  # the reviser cannot rewrite a kept axis either
            assert {p.text for p in section.points} <= {p.text for p in kept[section.axis].points}
