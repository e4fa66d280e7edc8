"""The counts agree everywhere (issue 39 item 4): report.html's header said « 9 appel(s) » where the
console counted 10 — the header counted attempts (journal lines) written before the grading, the
console logical calls of the whole night. Both now count logical calls, the dossier's apart from the
grading's, and the console prints the header's figure beside its total."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.delivery.header import report_header
from veille.journal import CallRecord
from veille.run.folder import RunInfo
from veille.run.summary import format_summary
from veille.steps.headings import failed_axis_titles

ROLES = ["planner", "analyst", "writer", "critic", "reviser", "judge"]

_calls = st.lists(
    st.tuples(st.sampled_from(ROLES), st.integers(1, 3), st.booleans()),  # role, attempts, cache hit
    max_size=15,
)


def _records(calls: list[tuple[str, int, bool]]) -> list[CallRecord]:
    return [
        CallRecord(
            run_id="r",
            call_id=f"c{i}",
            attempt=attempt,
            role=role,
            backend="offline",
            model="offline",
            status="ok",
            cost_usd=0.001,
            cache_hit=hit,
            started_at="2026-12-07T00:00:00+00:00",
        )
        for i, (role, attempts, hit) in enumerate(calls)
        for attempt in range(1, attempts + 1)
    ]


def _info() -> RunInfo:
    return RunInfo(
        run_id="20261207T002128Z-4b2cf9",
        started_at="2026-12-07T00:21:28+00:00",
        finished_at="2026-12-07T00:21:39+00:00",
        status="completed",
        corpus_dir="/c",
        request_title="t",
        backend="offline",
        models={},
        validated=True,
        rounds=1,
        subtasks_total=2,
        subtasks_failed=0,
    )


@settings(max_examples=40, deadline=None)
@given(_calls)
def test_the_header_and_the_console_give_the_same_dossier_count(calls: list[tuple[str, int, bool]]) -> None:
    records = _records(calls)
    dossier_calls = sum(1 for role, _, _ in calls if role != "judge")
    grading_calls = len(calls) - dossier_calls
    header = report_header(_info(), records, documents_read=3, sources_cited=2)
    assert header.cost.endswith(f"({dossier_calls} appel(s) au modèle pour le dossier)"), header.cost
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        (run_dir / "calls.jsonl").write_text(
            "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8"
        )
        [total] = [line for line in format_summary(run_dir).splitlines() if line.startswith("Coût total")]
    assert f"({len(calls)} appel(s) au modèle" in total, total
    if grading_calls:
        assert (
            f": {dossier_calls} pour le dossier, comme l'en-tête de report.html, et {grading_calls} pour la notation)"
            in total
        )
    else:
        assert total.endswith(f"({dossier_calls} appel(s) au modèle)"), total
    # The per-role lines add up to the total.
    assert _role_calls(records) == len(calls)


def _role_calls(records: list[CallRecord]) -> int:
    from veille.run.summary import role_usage

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calls.jsonl"
        path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
        return sum(u.calls for u in role_usage(path))


class _Branch:
    def __init__(self, subtask_id: str, question: str, status: str) -> None:
        self.subtask_id, self.question, self.status = subtask_id, question, status


def test_the_header_names_a_failed_axis_by_its_phrase_not_its_id() -> None:
    frame = "Dans le cadre de « Moteur d'inférence en 2027 », que disent les documents sur "
    branches = [
        _Branch("st-1", frame + "performances et stabilité (débit, latence) pour Kestrel ?", "ok"),
        _Branch("st-2", frame + "coût total sur 3 ans (licence, support) pour Kestrel ?", "failed"),
    ]
    failed = failed_axis_titles(branches)
    assert failed == ["Coût total sur 3 ans"]
    info = _info().model_copy(update={"status": "failed", "subtasks_failed": 1})
    header = report_header(info, [], documents_read=3, sources_cited=2, failed_axes=failed)
    [reason] = header.reasons
    assert reason == "1 volet(s) sur 2 en échec : Coût total sur 3 ans"
    assert not re.search(r"st-\d", reason)
