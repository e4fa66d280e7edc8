"""An unchanged night does not verify the same structure again (issue 40 item 4): the verifier's
result kept for the same structure, texts, options, request, stage and code is the one computed,
and a change of any of them verifies again (veille.steps.verify_memo)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import veille.steps.verify_memo as memo
from tests.test_verify_properties import OPTIONS, _measure, claims, worlds
from veille.dossier import AxisSection, Dossier, KeyPoint
from veille.steps.verify import SourceText, VerifyContext, verify_dossier


def _dossier(points: list[tuple[str, str, int, list[int]]]) -> Dossier:
    return Dossier(
        sections=[
            AxisSection(
                axis="st-1",
                points=[
                    KeyPoint(text=f"{o} : {_measure(u)} de {v} {u}", citations=c) for o, u, v, c in points
                ],
            )
        ]
    )


class _Counting:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        monkeypatch.setattr(memo, "verify_dossier", self)

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return verify_dossier(*args)


def _edit(
    kind: str, dossier: Dossier, context: VerifyContext, stage: str, n: int
) -> tuple[Dossier, VerifyContext, str]:
    numbers = sorted(context.documents)
    number = numbers[n % len(numbers)]
    doc = context.documents[number]
    if kind == "text":
        edited = doc.model_copy(update={"text": doc.text.replace("1", "7", 1) + "\n\nUne ligne de plus."})
        return dossier, context.model_copy(update={"documents": {**context.documents, number: edited}}), stage
    if kind == "title":
        edited = doc.model_copy(update={"title": f"{OPTIONS[n % len(OPTIONS)]} : fiche corrigée"})
        return dossier, context.model_copy(update={"documents": {**context.documents, number: edited}}), stage
    if kind == "id":
        edited = doc.model_copy(update={"id": doc.id + "-bis"})
        return dossier, context.model_copy(update={"documents": {**context.documents, number: edited}}), stage
    if kind == "options":
        return dossier, context.model_copy(update={"options": context.options[:-1]}), stage
    if kind == "request":
        return dossier, context.model_copy(update={"request": f"Pour {n} ms au plus ?"}), stage
    if kind == "stage":
        return dossier, context, stage + "-revision"
    # kind == "point": one key point's figure or citation changed
    points = [*dossier.sections[0].points]
    i = n % len(points)
    points[i] = points[i].model_copy(update={"text": points[i].text + "0", "citations": [numbers[-1]]})
    return Dossier(sections=[AxisSection(axis="st-1", points=points)]), context, stage


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=st.data(),
    kind=st.sampled_from(["text", "title", "id", "options", "request", "stage", "point"]),
    n=st.integers(0, 20),
)
def test_the_kept_verification_is_the_computed_one_and_any_changed_input_verifies_again(
    data: st.DataObject, kind: str, n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents, facts = data.draw(worlds())
    points = data.draw(st.lists(claims(sorted(facts), sorted(documents)), min_size=1, max_size=5))
    dossier = _dossier(points)
    with tempfile.TemporaryDirectory() as tmp:
        context = VerifyContext(documents=documents, options=OPTIONS, request="", memo=Path(tmp))
        expected = verify_dossier(dossier, context, "report")
        counting = _Counting(monkeypatch)
        first = memo.remembered_verify(dossier, context, "report")
        again = memo.remembered_verify(dossier, context, "report")
        assert first == again == expected
        assert counting.calls == 1  # the unchanged night verified nothing

        e_dossier, e_context, e_stage = _edit(kind, dossier, context, "report", n)
        assert memo.remembered_verify(e_dossier, e_context, e_stage) == verify_dossier(
            e_dossier, e_context, e_stage
        )
        assert counting.calls == 2
        # Both are kept (the writer's structure and a revision): neither is verified again.
        assert memo.remembered_verify(dossier, context, "report") == expected
        assert counting.calls == 2
    monkeypatch.undo()


def test_no_folder_keeps_nothing_and_the_folder_is_no_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "Alpha : latence de 12 ms."
    context = VerifyContext(
        documents={1: SourceText(number=1, id="doc-1", title="Alpha : fiche", date="2026-01-01", text=text)},
        options=OPTIONS,
    )
    dossier = _dossier([("Alpha", "ms", 12, [1]), ("Alpha", "ms", 13, [1])])
    expected = verify_dossier(dossier, context)
    assert (
        len(expected[0].sections[0].points) == 1 and expected[1]
    )  # a real drop, so a wrong kept value shows
    counting = _Counting(monkeypatch)
    assert memo.remembered_verify(dossier, context) == expected
    assert memo.remembered_verify(dossier, context) == expected
    assert counting.calls == 2
    kept = context.model_copy(update={"memo": tmp_path})
    assert kept.model_dump() == context.model_dump()  # where results are kept is in no dump or key
    assert memo.remembered_verify(dossier, kept) == expected
    (tmp_path / "verified.json").write_text("[damaged", encoding="utf-8")
    assert memo.remembered_verify(dossier, kept) == expected
    assert memo.remembered_verify(dossier, kept) == expected
    assert counting.calls == 4
