"""End to end with the offline engine on the bundled corpus, checked against reference/facts.yaml.

Nothing here names a document: the expectations come from the corpus's own reference, so the same
test applies to any corpus that ships one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from veille.citations import cited_numbers, invalid_citations
from veille.corpus.reference import load_reference
from veille.dossier import (
    KEY_POINTS_SECTION,
    LEDGER_SECTION,
    RECOMMENDATION_SECTION,
    ledger_entries,
    rendered_key_points,
    without_news,
)
from veille.flows.veille import veille_flow
from veille.textstats import MODEL_SECTIONS, split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def offline_run(bundled_corpus_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    warehouse = tmp_path_factory.mktemp("warehouse")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse))
        state = veille_flow(corpus=str(bundled_corpus_path), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    return Path(state.result())


@pytest.fixture(scope="module")
def bundled_corpus_path() -> Path:
    return Path(__file__).resolve().parents[1] / "corpus"


def test_plan_respects_the_reference_groups_keep_and_exclude(
    offline_run: Path, bundled_corpus_path: Path
) -> None:
    reference = load_reference(bundled_corpus_path)
    assert reference is not None
    facts = reference.facts
    plan = _json(offline_run / "plan.json")
    scopes = [set(st["doc_ids"]) for st in plan["sub_tasks"]]
    used = set().union(*scopes)
    for group in facts.groups:  # same subject at different dates: read together by one analyst
        assert any(set(group) <= scope for scope in scopes), f"group {group} split across sub-tasks"
    assert set(facts.keep) <= used, f"kept documents not read: {sorted(set(facts.keep) - used)}"
    assert not set(facts.exclude) & used
    assert set(facts.exclude) <= set(plan["excluded"])


def test_report_has_every_section_and_no_orphan_citation(offline_run: Path) -> None:
    report = (offline_run / "report.md").read_text(encoding="utf-8")
    sections = split_sections(report)
    for name in (*MODEL_SECTIONS, "Sources"):
        assert sections.get(name), f"section {name!r} missing or empty"
    sources = _json(offline_run / "sources.json")
    body = report.split("\n## Sources")[0]
    assert invalid_citations(body, [None] * len(sources)) == []
    # Every listed source is cited, numbered in order of first appearance.
    first_seen = cited_numbers(body)
    assert first_seen == [s["number"] for s in sources]


def test_run_folder_is_complete_and_consistent(offline_run: Path) -> None:
    run = _json(offline_run / "run.json")
    assert run["status"] == "completed" and run["backend"] == "offline"
    plan = _json(offline_run / "plan.json")
    findings = _json(offline_run / "findings.json")
    assert set(findings) == {st["id"] for st in plan["sub_tasks"]}
    assert all(f["status"] == "ok" for f in findings.values())
    review = _json(offline_run / "review.json")
    assert run["rounds"] == len(review["rounds"]) >= 1 and run["validated"] == review["validated"]
    calls = [json.loads(line) for line in (offline_run / "calls.jsonl").read_text().splitlines()]
    analyst_calls = {c["subtask_id"] for c in calls if c["role"] == "analyst"}
    assert analyst_calls == set(findings)


def _night(corpus: Path, warehouse: Path) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse))
        state = veille_flow(corpus=str(corpus), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    return Path(state.result())


@pytest.fixture(scope="module")
def second_night(offline_run: Path, bundled_corpus_path: Path) -> Path:
    """The night after ``offline_run``, nothing changed: it reuses the first night's plan."""
    return _night(bundled_corpus_path, offline_run.parents[1])


MEMOS = ("settled.json", "verified.json")  # veille.steps.settle_memo, veille.steps.verify_memo


@pytest.fixture(scope="module")
def third_night(
    second_night: Path, bundled_corpus_path: Path
) -> tuple[Path, dict[str, bytes], dict[str, int]]:
    """A third night, nothing changed; with the memo files as the second night left them (bytes and
    mtimes), read before the third night runs."""
    cache = second_night.parents[1] / "cache"
    kept = {name: (cache / name).read_bytes() for name in MEMOS}
    stamps = {name: (cache / name).stat().st_mtime_ns for name in MEMOS}
    return _night(bundled_corpus_path, second_night.parents[1]), kept, stamps


def test_unchanged_rerun_makes_no_model_call_and_writes_the_same_report(
    offline_run: Path, second_night: Path
) -> None:
    from veille.journal import read_journal

    assert {r.role for r in read_journal(offline_run / "calls.jsonl")} >= {"writer", "critic", "judge"}
    rerun = second_night
    assert rerun != offline_run
    calls_path = rerun / "calls.jsonl"
    records = read_journal(calls_path) if calls_path.exists() else []
    assert [(r.role, r.subtask_id) for r in records] == []  # plan, branches, writer, critic, reviser, judge
    read = lambda name: (rerun / name).read_text(encoding="utf-8")  # noqa: E731
    first = (offline_run / "report.md").read_text(encoding="utf-8")
    assert without_news(read("report.md")) == without_news(first)  # the same dossier…
    news = next(v for k, v in split_sections(read("report.md")).items() if k.startswith("Nouveautés depuis"))
    assert f"(exécution {offline_run.name}) : 0 document(s) nouveau(x), 0 modifié(s), 0 retiré(s)" in news
    assert "Aucun point clé nouveau ou modifié" in news  # …and it says nothing changed since the first
    assert _json(rerun / "review.json") == _json(offline_run / "review.json")
    first_grades = {(g["grader"], g["target"]): g["score"] for g in _json(offline_run / "grades.json")}
    assert {(g["grader"], g["target"]): g["score"] for g in _json(rerun / "grades.json")} == first_grades


def test_an_unchanged_night_reads_back_the_settling_and_the_verification_and_writes_the_same_dossier(
    second_night: Path, third_night: tuple[Path, dict[str, bytes], dict[str, int]]
) -> None:
    """Issue 40 item 4 (was tests/test_unchanged_flow.py, three nights of its own): the plan's
    settling and the verifier's results are read back, not computed. The first night plans; the
    second reuses that plan (its outcome differs from the first's, so it settles and keeps the
    result); the third changes nothing: both memo files are read, neither is rewritten, and every
    output that does not name the night equals the second night's, computed in full."""
    third, kept, stamps = third_night
    assert all(json.loads(v) for v in kept.values())
    # The settling kept: one slot (veille.steps.unchanged.remembered), a [key, value] entry.
    ((_, settled),) = json.loads(kept["settled.json"])["entries"]
    assert settled is not None
    cache = third.parents[1] / "cache"
    # Read back, not computed: a computed result is written again (same bytes, a new mtime).
    assert {name: (cache / name).stat().st_mtime_ns for name in MEMOS} == stamps
    for name in ("plan.json", "findings.json", "review.json", "sources.json"):
        assert _json(third / name) == _json(second_night / name), name
    scores = lambda folder: {(g["grader"], g["target"]): g["score"] for g in _json(folder / "grades.json")}  # noqa: E731
    assert scores(third) == scores(second_night)
    report = lambda folder: (folder / "report.md").read_text(encoding="utf-8")  # noqa: E731
    assert without_news(report(third)) == without_news(report(second_night))


def test_dossier_states_every_contradiction_and_keeps_superseded_figures_out(
    offline_run: Path, bundled_corpus_path: Path
) -> None:
    """Issue 12: the reference's contradictions stated with retained and rejected sources, no key
    point on the rejected side left unmarked, most reference figures found, a recommendation, and
    the arbiter's validation within max_rounds."""
    reference = load_reference(bundled_corpus_path)
    assert reference is not None
    grades = {g["grader"]: g for g in _json(offline_run / "grades.json") if g["target"] == "final"}
    ledger = grades["structure.ledger"]
    assert ledger["score"] == 1.0, ledger["details"]
    assert ledger["details"]["superseded_unmarked"] == []
    figures = len(reference.facts.figures)
    assert grades["numeric"]["score"] * figures >= 10, grades["numeric"]["details"]
    report = (offline_run / "report.md").read_text(encoding="utf-8")
    sections = split_sections(report)
    # The rejected figure of each entry ("X retenu contre Y") is stated in the ledger; no key point
    # sourced only from the rejected side quotes it (one citing the retained side may: "passe de Y à X").
    points = rendered_key_points(sections[KEY_POINTS_SECTION])
    for _, rejected_side, line in ledger_entries(sections[LEDGER_SECTION]):
        for figure in re.findall(r"retenu contre ([^.;]+)", line):
            quoting = [
                p.text
                for p in points
                if not p.superseded and figure.strip() in p.text and set(p.citations) <= set(rejected_side)
            ]
            assert not quoting, (figure, quoting)
    assert sections[RECOMMENDATION_SECTION].strip()
    review = _json(offline_run / "review.json")
    run = _json(offline_run / "run.json")
    assert review["validated"] and len(review["rounds"]) <= run["settings"]["max_rounds"]
