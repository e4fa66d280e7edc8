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
from veille.run.summary import format_summary
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


@pytest.fixture(scope="module")
def third_night(second_night: Path, bundled_corpus_path: Path) -> tuple[Path, dict[str, int]]:
    """A third night, nothing changed; with the modification time of every file the nights keep
    under ``<warehouse>/cache`` (settling, verification, scans…) as the second night left them."""
    cache = second_night.parents[1] / "cache"
    stamps = {str(p.relative_to(cache)): p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}
    return _night(bundled_corpus_path, second_night.parents[1]), stamps


def test_an_unchanged_night_reuses_the_previous_dossier_without_a_step_or_a_call(
    offline_run: Path, second_night: Path
) -> None:
    """Issue 40 item 4: nothing the skipped steps read changed (veille.run.nightkey), so the second
    night is the first's dossier (veille.run.nightskip): no model call, the same plan, findings and
    review, the report rendered again with tonight's news, grades carried over, recorded as reused."""
    from veille.journal import read_journal
    from veille.warehouse import query

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
    for name in ("plan.json", "findings.json", "review.json"):
        assert read(name) == (offline_run / name).read_text(encoding="utf-8"), name
    run, was = _json(rerun / "run.json"), _json(offline_run / "run.json")
    assert run["reused_from"] == offline_run.name and run["models"] == {} and was["reused_from"] is None
    facts = ("validated", "rounds", "subtasks_total")
    assert {k: run[k] for k in facts} == {k: was[k] for k in facts}
    first_grades = {(g["grader"], g["target"]): g["score"] for g in _json(offline_run / "grades.json")}
    grades = _json(rerun / "grades.json")
    assert {(g["grader"], g["target"]): g["score"] for g in grades} == first_grades
    assert all(g["carried_over"] and g["details"]["from_run"] == offline_run.name for g in grades)
    # Alerts: what describes the corpus is tonight's too (the injection still present), what was
    # an event of the first night is not, and tonight says it reused a dossier.
    codes = lambda folder: [a["code"] for a in _json(folder / "alerts.json")]  # noqa: E731
    assert "injection.suspected" in codes(offline_run) and "injection.suspected" in codes(rerun)
    assert codes(rerun).count("run.night_reused") == 1 and "run.night_reused" not in codes(offline_run)
    assert not {"plan.reused", "delivery.failed"} & set(codes(rerun))
    # The warehouse: the night recorded as reused, no call, no token, its scores carried over.
    parquet = rerun.parents[1] / "parquet"
    sql = "SELECT reused_from, calls, input_tokens + output_tokens, status FROM runs WHERE run_id = ?"
    assert query(parquet, sql, [rerun.name])[1] == [(offline_run.name, 0, 0, "completed")]
    sql = "SELECT count(*), bool_and(carried_over) FROM grader_scores WHERE run_id = ?"
    assert query(parquet, sql, [rerun.name])[1] == [(len(grades), True)]
    sql = "SELECT count(*) FROM alerts WHERE run_id = ?"
    assert query(parquet, sql, [rerun.name])[1] == [(len(codes(rerun)),)]
    # The console summary says so: the reused dossier, and no model call rather than an empty list.
    summary = format_summary(rerun)
    assert f"nuit inchangée : dossier du {offline_run.name} repris" in summary
    assert "Appels au modèle (par rôle) : aucun" in summary


def test_a_chain_of_unchanged_nights_each_reuses_the_night_before_and_redoes_no_step(
    offline_run: Path, second_night: Path, third_night: tuple[Path, dict[str, int]]
) -> None:
    """The third night reuses the second (itself reused): no file the steps keep under the cache
    (plan settling, verification, scans; their own property tests: tests/test_settle_memo.py,
    tests/test_verify_memo.py) is read back or written, since no step runs; every output that does
    not name the night equals the second night's."""
    third, stamps = third_night
    cache = third.parents[1] / "cache"
    assert {
        str(p.relative_to(cache)): p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()
    } == stamps
    assert _json(third / "run.json")["reused_from"] == second_night.name
    for name in ("plan.json", "findings.json", "review.json", "sources.json"):
        assert _json(third / name) == _json(second_night / name), name
    grades = _json(third / "grades.json")
    assert grades == _json(second_night / "grades.json")  # carried from the night that graded them
    assert all(g["details"]["from_run"] == offline_run.name for g in grades)
    report = lambda folder: (folder / "report.md").read_text(encoding="utf-8")  # noqa: E731
    assert without_news(report(third)) == without_news(report(second_night))
    assert f"(exécution {second_night.name})" in report(third)


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
