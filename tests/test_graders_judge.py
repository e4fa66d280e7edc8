"""The LLM judge through the model layer: scripted model and the fake Gemini server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as settings_h
from hypothesis import strategies as st

from testkit.fake_gemini import FakeGemini, Reply
from testkit.scripted import ScriptedModel
from veille.backends import build_client
from veille.graders import JudgeNumbers, JudgeSimilarity
from veille.graders.judge import JudgeGrader, normalise_scores, presentation_order
from veille.models.base import ModelRequest, SchemaValidationError
from veille.models.caller import ModelClient
from veille.roles.judge import JudgeInput, JudgeScore, JudgeVerdict, make_verdict
from veille.settings import Settings

REFERENCE = "WACC ≈ 9,91 % ; coût des capitaux propres 10,34 % ; dette après impôt 4,15 % ; EV ≈ 1 705 M$."
RESPONSES = ["WACC 9,95 %, fonds propres 10,3 %, dette 4,2 %, EV 1 700 M.", "Le WACC est de 1,33 %"]


def score(a: int, u: int, t: int, f: int, why: str = "ok") -> JudgeScore:
    return JudgeScore(accuracy=a, usefulness=u, tone=t, format=f, justification=why)


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return Settings(warehouse_dir=tmp_path / "warehouse", use_cache=False, reask_attempts=1)


@pytest.fixture()
def scripted(settings: Settings, tmp_path: Path) -> Iterator[tuple[ScriptedModel, ModelClient]]:
    model = ScriptedModel()
    client = build_client(settings, run_id="run-judge", journal_path=tmp_path / "calls.jsonl", model=model)
    yield model, client
    client.close()


def test_normalisation_formula_is_gated_by_accuracy() -> None:
    assert normalise_scores(score(1, 1, 1, 1)) == 0.0
    assert normalise_scores(score(5, 5, 5, 5)) == 1.0
    assert normalise_scores(score(5, 4, 4, 3)) == pytest.approx(0.75)  # mean 4 → 3/4
    # Wrong but well written: the mean (0.75 / 0.5) would reward tone and format; accuracy caps it.
    assert normalise_scores(score(2, 4, 5, 5)) == pytest.approx(0.25)
    assert normalise_scores(score(1, 3, 5, 5)) == 0.0  # « Je ne sais pas. » in a perfect tone
    # A right answer in a poor format still loses through the mean.
    assert normalise_scores(score(5, 3, 3, 1)) == pytest.approx(0.5)


def test_the_seed_wrong_recipient_answer_cannot_score_like_the_right_one(
    scripted: tuple[ScriptedModel, ModelClient],
) -> None:
    # Seed 002, answers A (right) and C (wrong recipient, best wording): a judge that sees C is
    # wrong but likes its tone and format gave it 0.75 under the equal-weight mean, as much as A.
    model, client = scripted
    reference = "Ouvrez le rapport, cliquez sur Partager, choisissez le client."
    right = "Cliquez sur Partager sur le rapport et choisissez le client."
    wrong = "Ouvrez le rapport, cliquez sur Partager et choisissez l'administrateur."

    def verdict(request: ModelRequest) -> JudgeVerdict:
        assert isinstance(request.input, JudgeInput)
        shown = request.input.responses
        return make_verdict([score(5, 4, 4, 3) if text == right else score(2, 4, 5, 5) for text in shown])

    model.function = verdict
    a, c = JudgeGrader(client).grade_group("Comment partager le rapport ?", reference, [right, wrong])
    assert (a.score, c.score) == (pytest.approx(0.75), pytest.approx(0.25))


def test_one_call_sees_reference_and_all_responses(scripted: tuple[ScriptedModel, ModelClient]) -> None:
    model, client = scripted
    order = presentation_order("Calcule le WACC", REFERENCE, RESPONSES)
    by_slot = {RESPONSES[0]: score(5, 4, 4, 3, "juste"), RESPONSES[1]: score(1, 2, 4, 3, "faux")}
    # Keys are response ids of the shown order, in any order in the answer: the last slot first.
    answer = {f"r{slot}": by_slot[RESPONSES[i]].model_dump() for slot, i in reversed(list(enumerate(order)))}
    model.add("judge", json.dumps(answer))
    results = JudgeGrader(client).grade_group("Calcule le WACC", REFERENCE, RESPONSES)

    [request] = model.requests_for("judge")
    data = request.input
    assert isinstance(data, JudgeInput)
    assert data.responses == [RESPONSES[i] for i in data.order] and data.reference == REFERENCE
    assert data.order == order and data.criteria == "generic"
    assert all(r in request.prompt for r in RESPONSES) and "9,91 %" in request.prompt
    # Scores are mapped back to the caller's order through the recorded permutation.
    assert [r.score for r in results] == pytest.approx([0.75, 0.0])
    assert results[0].details["justification"] == "juste"
    assert results[1].details["criteria"] == {"accuracy": 1, "usefulness": 2, "tone": 4, "format": 3}
    assert [r.details["shown_position"] for r in results] == [order.index(0), order.index(1)]
    assert {r.model for r in results} == {client.settings.role("judge").model}
    assert {(r.grader, r.version) for r in results} == {("judge", "2")}


def test_generic_and_dossier_criteria_are_told_apart(scripted: tuple[ScriptedModel, ModelClient]) -> None:
    model, client = scripted
    model.function = lambda request: make_verdict([score(3, 3, 3, 3)])
    JudgeGrader(client).grade_group("q", "r", ["a"])
    JudgeGrader(client, criteria="dossier").grade_group("q", "r", ["a"])
    generic, dossier = (r.prompt for r in model.requests_for("judge"))
    assert "contradictions" not in generic and "sources citées" not in generic
    assert "contradictions" in dossier


@settings_h(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=5), min_size=1, max_size=8), st.text(max_size=5))
def test_presentation_order_is_a_reproducible_permutation(responses: list[str], prompt: str) -> None:
    order = presentation_order(prompt, "ref", responses)
    assert sorted(order) == list(range(len(responses)))
    assert order == presentation_order(prompt, "ref", responses)


def test_the_last_response_is_not_always_shown_last() -> None:
    # Over many groups the final report (last given) lands in every slot: no fixed position.
    slots = {presentation_order(f"q{k}", "ref", ["d1", "d2", "final"]).index(2) for k in range(60)}
    assert slots == {0, 1, 2}


def test_verdict_missing_a_response_is_reasked(
    scripted: tuple[ScriptedModel, ModelClient], tmp_path: Path
) -> None:
    model, client = scripted
    model.add(
        "judge",
        make_verdict([score(5, 5, 5, 5)]),  # forgets response 1
        make_verdict([score(5, 5, 5, 5), score(1, 1, 1, 1)]),
    )
    results = JudgeGrader(client).grade_group("q", REFERENCE, RESPONSES)
    assert [results[i].score for i in presentation_order("q", REFERENCE, RESPONSES)] == [1.0, 0.0]
    assert len(model.requests_for("judge")) == 2
    assert "r1" in model.requests_for("judge")[1].feedback[0][1]
    statuses = [json.loads(line)["status"] for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert statuses == ["schema_error", "ok"]


def test_judge_that_never_answers_properly_raises(scripted: tuple[ScriptedModel, ModelClient]) -> None:
    model, client = scripted
    forgetful = make_verdict([score(5, 5, 5, 5)])
    model.add("judge", forgetful, forgetful)
    with pytest.raises(SchemaValidationError):
        JudgeGrader(client).grade_group("q", REFERENCE, RESPONSES)


def test_combinations_share_one_judge_call(scripted: tuple[ScriptedModel, ModelClient]) -> None:
    model, client = scripted

    def verdict(request: ModelRequest) -> JudgeVerdict:
        n = len(request.input.responses)
        return make_verdict([score(3, 3, 3, 3) for _ in range(n)])

    model.function = verdict
    judge = JudgeGrader(client)
    judged = judge.grade_group("q", REFERENCE, RESPONSES)
    numbers = JudgeNumbers(judge)
    combined = numbers.combine_results(judged, numbers.other.grade_group("q", REFERENCE, RESPONSES))
    assert [r.score for r in combined] == pytest.approx([0.5 * 0.5 + 0.5 * 0.875, 0.5 * 0.5])
    similarity = JudgeSimilarity(judge).grade_group("q", REFERENCE, RESPONSES)
    assert all(r.model == judged[0].model for r in similarity)
    assert len(model.requests_for("judge")) == 2  # one for the first group, one for grade_group above


def test_empty_group_makes_no_call(scripted: tuple[ScriptedModel, ModelClient]) -> None:
    model, client = scripted
    assert JudgeGrader(client).grade_group("q", REFERENCE, []) == []
    assert model.requests == []


# --- through the real google-genai SDK against the fake Gemini server ---------------------------


@pytest.fixture()
def gemini_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeGemini, ModelClient]]:
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-real")
    with FakeGemini() as server:
        settings = Settings(
            backend="gemini",
            gemini_base_url=server.base_url,
            gemini_api_version="v1beta",
            warehouse_dir=tmp_path / "warehouse",
            http_attempts=2,
            http_retry_initial_delay_s=0.01,
            request_timeout_ms=5000,
            use_cache=False,
        )
        client = build_client(settings, run_id="run-gemini-judge", journal_path=tmp_path / "calls.jsonl")
        try:
            yield server, client
        finally:
            client.close()


def _wire(verdict: JudgeVerdict) -> dict[str, Any]:
    return verdict.model_dump()


def test_judge_through_fake_gemini(gemini_client: tuple[FakeGemini, ModelClient], tmp_path: Path) -> None:
    server, client = gemini_client
    server.script(
        Reply.text('{"r0": {"accuracy": 4'),  # cut short: re-asked
        Reply.json(_wire(make_verdict([score(4, 4, 5, 5), score(1, 2, 3, 2)]))),
    )
    results = JudgeGrader(client).grade_group("Calcule le WACC", REFERENCE, RESPONSES)
    shown = [results[i].score for i in presentation_order("Calcule le WACC", REFERENCE, RESPONSES)]
    assert shown == pytest.approx([0.75, 0.0])  # gated by accuracy: min(3/4, 7/8) and min(0, 1/4)
    assert results[0].model == client.settings.role("judge").model
    assert len(server.requests) == 2
    body = server.requests[0].body
    sent = json.dumps(body, ensure_ascii=False)
    assert all(r in sent for r in RESPONSES)
    # The judge model of the settings is the one called.
    assert server.requests[0].model == client.settings.role("judge").model
    records = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [(r["role"], r["status"]) for r in records] == [("judge", "schema_error"), ("judge", "ok")]


# --- offline engine (proxy scores) ---------------------------------------------------------------


def test_offline_judge_ranks_the_reference_above_a_wrong_answer(tmp_path: Path, bundled_corpus: Path) -> None:
    from veille.corpus.reference import load_reference

    reference = load_reference(bundled_corpus)
    assert reference is not None
    settings = Settings(backend="offline", warehouse_dir=tmp_path / "warehouse", use_cache=False)
    with build_client(settings, run_id="run-offline-judge") as client:
        wrong = "Orvet est le meilleur moteur, sans aucun doute !"
        results = JudgeGrader(client).grade_group(
            "Quel moteur ?", reference.dossier, [wrong, reference.dossier]
        )
    assert results[1].score > results[0].score  # type: ignore[operator]
    assert all(0.0 <= r.score <= 1.0 for r in results)  # type: ignore[operator]
    assert all(set(r.details["criteria"]) == {"accuracy", "usefulness", "tone", "format"} for r in results)
