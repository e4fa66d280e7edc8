"""An unchanged night does not settle the plan again (issue 40 item 4): the settling kept for the
same inputs is the one computed, and a change of any input settles again (veille.steps.settle_memo)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import veille.steps.settle_memo as memo
from veille.alerts import alert
from veille.backends import build_client
from veille.corpus.request import load_request
from veille.roles.planner import PlannerInput
from veille.run.folder import new_run_id
from veille.settings import Settings
from veille.steps.catalogue import LeftOut, planner_catalogue, text_relevance, with_texts
from veille.steps.plan import PlanOutcome, make_plan
from veille.steps.plan_settle import settle_plan
from veille.steps.text_relevance import TextRelevance
from veille.store.ingest import ingest_corpus
from veille.store.readers import read_catalogue

CORPUS = Path(__file__).resolve().parent / "corpora" / "clients-http"


@dataclass(frozen=True)
class Args:
    outcome: PlanOutcome
    data: PlannerInput
    bodies: dict[str, str]
    budget: int | None
    authority_file: Path
    flagged: dict[str, str]
    left_out: tuple[LeftOut, ...]
    text: TextRelevance | None

    def settle(self) -> PlanOutcome:
        return settle_plan(
            self.outcome, self.data, self.bodies, self.budget, self.authority_file,
            flagged=self.flagged, left_out=self.left_out, text=self.text,
        )  # fmt: skip

    def remembered(self, folder: Path | None) -> PlanOutcome:
        return memo.remembered_settle(
            folder, self.outcome, self.data, self.bodies, self.budget, self.authority_file,
            flagged=self.flagged, left_out=self.left_out, text=self.text,
        )  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Args:
    """The offline plan of a test corpus as the flow's plan step has it before settling."""
    root = tmp_path_factory.mktemp("settle")
    config = Settings.from_params(
        corpus=str(CORPUS), backend="offline", use_cache=False, warehouse=str(root / "wh")
    )
    ingest_corpus(config.corpus_dir, config.database, strict=True)
    listing = read_catalogue(config.database, with_summaries=config.planner_sees_summaries)
    shown = with_texts(planner_catalogue(load_request(CORPUS), listing.entries, config), config.database)
    with build_client(config, run_id=new_run_id()) as client:
        text = text_relevance(shown, config.database)
        outcome = make_plan(client, shown.data, text=text)
    authority = root / "authority.toml"
    shutil.copyfile(config.authority_file, authority)
    return Args(outcome, shown.data, dict(shown.data.texts), 3000, authority, {}, (), text)


def _edit_body(args: Args, i: int) -> Args:
    doc_id = sorted(args.bodies)[i % len(args.bodies)]
    body = args.bodies[doc_id] + "\n\nUne phrase de plus sur le débit mesuré."
    return replace(
        args,
        bodies={**args.bodies, doc_id: body},
        data=args.data.model_copy(update={"texts": {**args.data.texts, doc_id: body}}),
    )


def _edit_entry(args: Args, i: int) -> Args:
    catalogue = [*args.data.catalogue]
    j = i % len(catalogue)
    catalogue[j] = catalogue[j].model_copy(update={"title": catalogue[j].title + " (corrigé)"})
    return replace(args, data=args.data.model_copy(update={"catalogue": catalogue}))


def _edit_question(args: Args, i: int) -> Args:
    tasks = [*args.outcome.plan.sub_tasks]
    j = i % len(tasks)
    tasks[j] = tasks[j].model_copy(update={"question": tasks[j].question + " Et son coût ?"})
    plan = args.outcome.plan.model_copy(update={"sub_tasks": tasks})
    return replace(args, outcome=args.outcome.model_copy(update={"plan": plan}))


def _edit_proposed(args: Args, i: int) -> Args:
    proposed = args.outcome.proposed.model_copy(update={"options": [*args.outcome.proposed.options, "httpx"]})
    return replace(args, outcome=args.outcome.model_copy(update={"proposed": proposed}))


def _edit_shares(args: Args, i: int) -> Args:
    assert args.text is not None and args.text.shares
    doc_id = sorted(args.text.shares)[i % len(args.text.shares)]
    shares = {**args.text.shares, doc_id: args.text.shares[doc_id] / 4}
    return replace(args, text=args.text.model_copy(update={"shares": shares}))


def _edit_authority(args: Args, i: int) -> Args:
    # Edited in place, same path: the file's bytes are in the key, not its name alone.
    with args.authority_file.open("a", encoding="utf-8") as out:
        out.write(f"\n# édité {i}\n")
    return args


EDITS: dict[str, Callable[[Args, int], Args]] = {
    "body": _edit_body,
    "catalogue entry": _edit_entry,
    "request": lambda a, i: replace(
        a, data=a.data.model_copy(update={"request": a.data.request + "\nPréciser le coût."})
    ),
    "terms": lambda a, i: replace(a, data=a.data.model_copy(update={"terms": [*a.data.terms, "débit"]})),
    "max_docs": lambda a, i: replace(a, data=a.data.model_copy(update={"max_docs": a.data.max_docs - 1})),
    "findings": lambda a, i: replace(a, data=a.data.model_copy(update={"findings": ["st-1 : vide"]})),
    "sub-task question": _edit_question,
    "proposal": _edit_proposed,
    "budget": lambda a, i: replace(a, budget=None if i % 2 else 1200 + i),
    "flagged": lambda a, i: replace(a, flagged={sorted(a.bodies)[i % len(a.bodies)]: "consigne"}),
    "left out": lambda a, i: replace(
        a, left_out=(LeftOut(id=sorted(a.bodies)[i % len(a.bodies)], reason="duplicate", detail="copie"),)
    ),
    "text relevance": _edit_shares,
    "no text relevance": lambda a, i: replace(a, text=None),
    "authority file": _edit_authority,
}


def _same(a: PlanOutcome, b: PlanOutcome) -> bool:
    """Equal as plan.json and the flow read them: every field's value, the reading included (the
    planner's proposal comes back as a Plan, not as its per-input schema subclass)."""
    return a.model_dump(mode="json") == b.model_dump(mode="json") and a.reading == b.reading


class _Counting:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        monkeypatch.setattr(memo, "settle_plan", self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return settle_plan(*args, **kwargs)


@settings(
    max_examples=14,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(edit=st.sampled_from(sorted(EDITS)), i=st.integers(0, 50))
def test_the_kept_settling_is_the_computed_one_and_any_changed_input_settles_again(
    base: Args, edit: str, i: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        args = replace(base, authority_file=folder / "authority.toml")
        shutil.copyfile(base.authority_file, args.authority_file)
        expected = args.settle()
        counting = _Counting(monkeypatch)
        first = args.remembered(folder)
        again = args.remembered(folder)  # an unchanged night: read back, not settled
        assert _same(first, expected) and _same(again, expected)
        assert counting.calls == 1

        changed = EDITS[edit](args, i)
        assert _same(changed.remembered(folder), changed.settle())
        assert counting.calls == 2  # settled again (``settle()`` calls settle_plan uncounted)
        assert _same(changed.remembered(folder), changed.settle())
        assert counting.calls == 2  # the changed inputs are now the kept ones
    monkeypatch.undo()


def test_a_damaged_file_settles_again_and_no_folder_keeps_nothing(
    base: Args, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = base.settle()
    assert expected.reading is not None and expected.plan.sub_tasks  # a real result to get wrong
    counting = _Counting(monkeypatch)
    assert _same(base.remembered(tmp_path), expected)
    (tmp_path / "settled.json").write_text("{not json", encoding="utf-8")
    assert _same(base.remembered(tmp_path), expected)
    assert _same(base.remembered(None), expected)
    assert _same(base.remembered(None), expected)
    assert counting.calls == 4


def test_what_the_settling_only_carries_is_put_back_from_tonight_not_kept(
    base: Args, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reused plan's outcome names the previous run in an alert each night: carried through
    settling, so tonight's is put back on the kept plan, and the night is still a hit."""
    counting = _Counting(monkeypatch)
    assert _same(base.remembered(tmp_path), base.settle())
    note = alert("plan", "plan.reused", "plan du dossier précédent (20260101T000000Z-abcdef) repris")
    tonight = replace(
        base,
        outcome=base.outcome.model_copy(update={"alerts": [*base.outcome.alerts, note], "basis": "autre"}),
    )
    served = tonight.remembered(tmp_path)
    assert counting.calls == 1
    assert _same(served, tonight.settle())
    assert note in served.alerts and served.basis == "autre"
