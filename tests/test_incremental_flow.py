"""Nights of the watch with the incremental analyst (issue 13, item 4): a copy of the bundled corpus,
the flow through the real google-genai SDK against the fake Gemini server.

Night 2 adds one document: the sub-task that receives it asks the incremental analyst once, with
the new document and not the text of the ones it already read; its findings are the previous ones
plus the new one. Night 3 changes nothing: no analyst at all. Night 4 edits a document of that
sub-task: every branch reading it reads it again, alone, what it supported dropped first."""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, RecordedRequest
from testkit.gemini_script import role_of
from tests.test_nightly_news import _catalogue_planner
from tests.test_offline_fixtures import bundled_document_texts
from veille.corpus.sections import split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

BUNDLED = Path(__file__).resolve().parents[1] / "corpus"
NEW = """---
id: doc-90
date: "2026-11-20"
source_type: blog-editeur
title: "Kestrel 3.0 : nouvelles mesures de débit et de latence"
summary: "L'éditeur de Kestrel publie les mesures de la version 3.0 sur sa charge de référence."
---

# Kestrel 3.0

La version 3.0 de Kestrel annonce un débit de 2 100 tokens/s par GPU sur la charge de référence de
l'éditeur, mesuré sur douze GPU avec des requêtes de 2 000 tokens en entrée.
"""


@pytest.fixture()
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        fake.responder = _catalogue_planner()
        yield fake


def _prompt(request: RecordedRequest) -> str:
    return "".join(p.get("text", "") for p in request.body["contents"][0]["parts"])


def _blocks(request: RecordedRequest) -> list[str]:
    return re.findall(r'<document id="([^"]+)"', _prompt(request))


class _BranchLines(logging.Handler):
    """The analyse branches' log lines (task-run logger)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("analyse "):
            self.lines.append(record.getMessage())


def _json(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def test_a_new_document_is_read_alone_and_an_edit_rereads_the_branch(
    tmp_path: Path, gemini: FakeGemini, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    from veille.flows.veille import veille_flow

    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED, corpus, ignore=shutil.ignore_patterns("sources.toml", ".collect-state.json"))
    for name, value in {
        "GEMINI_API_KEY": "test-key",
        "VEILLE_WAREHOUSE_DIR": str(tmp_path / "warehouse"),
        "VEILLE_GEMINI_BASE_URL": gemini.base_url,
        "VEILLE_GEMINI_API_VERSION": "v1beta",
        "VEILLE_HTTP_RETRY_INITIAL_DELAY_S": "0.01",
    }.items():
        monkeypatch.setenv(name, value)
    logged = _BranchLines()
    logging.getLogger("prefect.task_runs").addHandler(logged)
    request.addfinalizer(lambda: logging.getLogger("prefect.task_runs").removeHandler(logged))

    def night() -> tuple[Path, list[RecordedRequest]]:
        before = len(gemini.requests)
        state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
        assert state.is_completed(), state.message
        return Path(state.result()), gemini.requests[before:]

    first, _ = night()
    findings_one = _json(first, "findings.json")
    from veille.settings import Settings
    from veille.tasks.analyse import analyst_basis

    # The basis names both analysts and the digest of their code (tasks.clients.model_key).
    assert {entry["analyst_basis"] for entry in findings_one.values()} == {analyst_basis(Settings())}
    assert all(entry["analyst_basis"].endswith("|read-10000") for entry in findings_one.values())

    # Night 2: one new document.
    (corpus / "docs" / "doc-90.md").write_text(NEW, encoding="utf-8")
    logged.lines.clear()
    second, requests = night()
    [receiving] = [s for s in _json(second, "plan.json")["sub_tasks"] if "doc-90" in s["doc_ids"]]
    # The plan is reused (no planner call) and kept stable (veille.steps.plan_stable): the new
    # document goes to one sub-task and moves no other, so exactly one branch calls a model.
    plan_one = {s["id"]: s["doc_ids"] for s in _json(first, "plan.json")["sub_tasks"]}
    plan_two = {s["id"]: s["doc_ids"] for s in _json(second, "plan.json")["sub_tasks"]}
    assert {i: [d for d in docs if d != "doc-90"] for i, docs in plan_two.items()} == plan_one
    assert not [r for r in requests if role_of(r.body) == "planner"]
    analysts = [r for r in requests if role_of(r.body).startswith("analyst")]
    assert [role_of(r.body) for r in analysts] == ["analyst_update"], [role_of(r.body) for r in requests]
    [update] = analysts
    assert _blocks(update) == ["doc-90"]
    prompt = _prompt(update)
    assert "2 100 tokens/s par GPU sur la charge de référence" in prompt  # the new document, in full
    texts = bundled_document_texts(corpus)
    old = [i for i in receiving["doc_ids"] if i != "doc-90"]
    assert old and all(i in prompt for i in old)  # the documents already read are listed...
    for doc_id in old:  # ...but none of their text is sent again
        lines = [line for line in texts[doc_id].body.splitlines() if len(line) > 40]
        assert lines and not any(line in prompt for line in lines), doc_id
    # The previous analysis, as data; the fake's findings (« Constat tiré de doc-NN. ») share no
    # figure nor content word with doc-90, so none is shown (veille.steps.update_context) — all kept below.
    assert "<constats>" in prompt and "Constat tiré de" not in prompt
    entry = _json(second, "findings.json")[receiving["id"]]
    before = findings_one[receiving["id"]]["findings"]
    assert entry["findings"][: len(before)] == before  # the previous findings, kept as they were
    assert entry["findings"][len(before) :] == [
        {"statement": "Constat tiré de doc-90.", "doc_ids": ["doc-90"], "figures": []}
    ]
    lines = [line for line in logged.lines if line.startswith(f"analyse {receiving['id']}:")]
    assert any(
        f"incremental (1 new document(s), since {first.name}): 1 new document(s) read, {len(before)} finding(s) "
        "carried over" in line
        for line in lines
    ), lines
    calls = [json.loads(line) for line in (second / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(c["role"], c["subtask_id"]) for c in calls if c["role"].startswith("analyst")] == [
        ("analyst_update", receiving["id"])
    ]  # its own role in the journal (its settings follow the analyst's)

    # Night 3: nothing changed: no analyst (the incremental branch's result is carried over).
    third, requests = night()
    assert not [r for r in requests if role_of(r.body).startswith("analyst")]
    assert _json(third, "findings.json")[receiving["id"]]["findings"] == entry["findings"]

    # Night 4: a document the branch had read is edited (a paragraph appended to its last section):
    # every branch reading that section reads it again, alone and by its changed section only
    # (issue 40: veille/steps/edited_sections.py); a branch reading other passages of it does not
    # call a model. The previous findings citing it stay only where code still finds their support
    # in the unchanged sections (these fake findings, « Constat tiré de … », are in no text: dropped).
    edited = corpus / "docs" / f"{old[0]}.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n\nMise à jour : chiffres confirmés.\n", "utf-8")
    sections = split_sections(bundled_document_texts(corpus)[old[0]].body)
    logged.lines.clear()
    fourth, requests = night()
    analysts = [r for r in requests if role_of(r.body).startswith("analyst")]
    reading_it = [
        s
        for s in _json(fourth, "plan.json")["sub_tasks"]
        if old[0] in s["doc_ids"]
        and sections[-1].n in (s.get("passages") or {}).get(old[0], [sections[-1].n])
    ]
    assert _json(fourth, "plan.json")["sub_tasks"] == _json(third, "plan.json")["sub_tasks"]
    assert reading_it and [role_of(r.body) for r in analysts] == ["analyst_update"] * len(reading_it)
    assert all(_blocks(r) == [old[0]] for r in analysts)  # the edited document alone
    unchanged = [  # its other sections' text (headings aside: the heading path is shown with the section)
        line
        for s in sections[:-1]
        for line in s.text(texts[old[0]].body).splitlines()
        if len(line) > 40 and not line.startswith("#")
    ]
    assert len(sections) > 1 and unchanged  # a document of several sections: only its last one is sent
    assert all(
        "chiffres confirmés" in _prompt(r) and not any(u in _prompt(r) for u in unchanged) for r in analysts
    )
    lines = [line for line in logged.lines if line.startswith(f"analyse {receiving['id']}:")]
    assert any(f"incremental (edited: {old[0]}, since {third.name})" in line for line in lines), lines
    after = _json(fourth, "findings.json")[receiving["id"]]["findings"]
    standing = [f for f in entry["findings"] if old[0] not in f["doc_ids"]]
    assert len(standing) < len(entry["findings"])  # the edited document had findings of its own
    assert [f for f in after if old[0] not in f["doc_ids"]] == standing  # the others, as they were
    assert [f["doc_ids"] for f in after if old[0] in f["doc_ids"]] == [[old[0]]]  # what it says tonight
    # Re-derived word for word from the changed section, it stands where it stood: the branch's
    # findings are the same list, so the steps after see an unchanged axis (kept sections).
    assert after == entry["findings"]
