"""The fault matrix, run level: the veille flow through the real google-genai SDK against the fake
Gemini server, one fault per test. Each test checks the documented behaviour (retry, re-ask, repair +
alert, partial report + Failed, or a clear stop), the alert rows in alerts.json AND the Parquet
``alerts`` table, and that nothing completed was lost; then it records a row of docs/reliability.md.

Model-level mechanics (pacing on the server clock, journal statuses of a single call) are tested in
tests/test_model_gemini.py; here the question is what a run does with them.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply, closed_port_url
from testkit.flowkit import AXES, PERFECT
from testkit.gemini_script import role_of
from tests.faultkit import GeminiFlow, GeminiRun, alert_codes, gemini_flow, prompt_of
from veille.run.summary import format_summary
from veille.textstats import split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

Flow = GeminiFlow
CORPUS_IDS = {f"doc-0{i}" for i in range(1, 8)}


@pytest.fixture(name="gemini_flow")
def _gemini_flow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Flow]:
    with gemini_flow(tmp_path, monkeypatch) as flow:
        yield flow


def _roles(server: FakeGemini) -> list[str]:
    return [role_of(r.body) for r in server.requests]


def _assert_alerts_recorded(run: GeminiRun) -> int:
    """Every alert of alerts.json is a row of the Parquet alerts table (same order); returns the count."""
    in_json = [(a["code"], a["subject"]) for a in run.alerts]
    in_parquet = run.parquet_alerts()
    assert in_parquet[: len(in_json)] == in_json
    return len(in_json)


def _assert_completed(run: GeminiRun) -> None:
    assert run.state.is_completed(), run.state.message
    assert run.run["status"] == "completed" and run.run["subtasks_failed"] == 0
    assert run.parquet("SELECT status FROM runs WHERE run_id = ?") == [("completed",)]
    assert {f["status"] for f in run.findings.values()} == {"ok"} and len(run.findings) == len(AXES)
    codes = alert_codes(run)
    assert not {"run.failed", "analyse.branch_failed", "run.partial_report"} & set(codes), codes


def _requests_for(server: FakeGemini, role: str, subtask: str | None = None) -> list[Any]:
    out = [r for r in server.requests if role_of(r.body) == role]
    if subtask is not None:
        out = [r for r in out if f"Question ({subtask})" in prompt_of(r.body)]
    return out


# --- HTTP faults: retried below the flow ---------------------------------------------------------


def test_429_burst_with_retry_info_is_paced_and_the_run_completes(
    gemini_flow: Flow, reliability: Any
) -> None:
    server, faults, run = gemini_flow
    faults.add("planner", Reply.error(429, "quota", retry_delay="0.3s"), Reply.error(429, retry_delay="0.3s"))
    for sub in ("st-1", "st-2", "st-3"):
        faults.add("analyst", Reply.error(429, "quota", retry_delay="0.2s"), subtask=sub)

    result = run()

    _assert_completed(result)
    planner = _requests_for(server, "planner")
    assert [r.status for r in planner] == [429, 429, 200]
    assert all(b.received_at - a.finished_at >= 0.3 for a, b in itertools.pairwise(planner))
    analysts = _requests_for(server, "analyst")
    assert sorted(r.status for r in analysts) == [200] * 3 + [429] * 3
    # Every request is a journal record: one transient_error per 429, one ok per call.
    calls = result.calls()
    assert sorted(c.error_class or c.status for c in calls if c.role in ("planner", "analyst")) == sorted(
        ["RateLimited"] * 5 + ["ok"] * 4
    )
    assert sum(c.http_requests or 0 for c in calls) == len(server.settled())
    alerts = _assert_alerts_recorded(result)
    reliability.record(
        "429 burst with RetryInfo (planner ×2, every analyst ×1)",
        "wait the server's retryDelay, send again within http_attempts; run completes",
        f"{len(planner)} planner requests ≥ 0.3 s apart, {len(analysts)} analyst requests; "
        f"run Completed, each 429 a transient_error record, {alerts} alerts in alerts.json = Parquet",
    )


def test_429_without_retry_info_beyond_the_http_budget_fails_its_branch_without_task_retry(
    gemini_flow: Flow, reliability: Any
) -> None:
    server, faults, run = gemini_flow
    faults.add("analyst", *[Reply.error(429, "rate limited")] * 3, subtask="st-2")  # = http_attempts

    result = run()

    assert result.state.is_failed()
    st2 = _requests_for(server, "analyst", "st-2")
    assert [r.status for r in st2] == [429, 429, 429]  # no Prefect task retry multiplies them
    journal = [(c.status, c.error_class) for c in result.calls() if c.subtask_id == "st-2"]
    assert journal == [("transient_error", "RateLimited")] * 3
    assert [result.findings[s]["status"] for s in ("st-1", "st-2", "st-3")] == ["ok", "failed", "ok"]
    assert ("analyse.branch_failed", "st-2") in result.parquet_alerts()
    assert result.parquet(
        "SELECT count(*), sum(http_requests) FROM llm_calls WHERE run_id = ? AND status = 'transient_error'"
    ) == [(3, 3)]
    reliability.record(
        "429 burst without retry info, longer than the HTTP budget (one analyst)",
        "exponential backoff within http_attempts, then the branch fails (tasks never resend a model "
        "call); partial report",
        f"st-2: {len(st2)} requests (3×429), journal 3 transient_error; other branches ok; "
        "analyse.branch_failed(st-2) in Parquet; run Failed",
    )


def test_429_asking_for_a_daily_quota_wait_stops_the_run_clearly(gemini_flow: Flow, reliability: Any) -> None:
    server, faults, run = gemini_flow
    faults.always("planner", Reply.error(429, "daily quota exceeded", retry_delay="86400s"))

    result = run()

    assert result.state.is_failed()
    assert _roles(server) == ["planner"]  # no wait of a day, no task retry
    failed = [a for a in result.alerts if a["code"] == "run.failed"]
    assert len(failed) == 1 and "86400" in failed[0]["message"] and "quota" in failed[0]["message"]
    assert result.run["status"] == "failed" and not (result.run_dir / "report.md").exists()
    assert ("run.failed", None) in result.parquet_alerts()
    reliability.record(
        "429 whose RetryInfo asks for more than http_retry_max_delay_s (daily quota)",
        "no wait; clear stop: run Failed, alert run.failed naming the delay",
        f"{len(server.requests)} planner request (no resend, no sleep), run Failed, run.failed "
        "'…asks to wait 86400 s… (quota exhausted?)' in alerts.json and Parquet",
    )


def test_500_and_503_are_retried_by_the_sdk(gemini_flow: Flow, reliability: Any) -> None:
    server, faults, run = gemini_flow
    faults.add("writer", Reply.error(500, "internal"), Reply.error(503, "unavailable"))
    faults.add("critic", Reply.error(503, "unavailable"))

    result = run()

    _assert_completed(result)
    assert [r.status for r in _requests_for(server, "writer")] == [500, 503, 200]
    assert [r.status for r in _requests_for(server, "critic")] == [503, 200]
    records = [(c.role, c.error_class or c.status) for c in result.calls() if c.role in ("writer", "critic")]
    writer = [("writer", "HTTP500"), ("writer", "HTTP503"), ("writer", "ok")]
    assert records == [*writer, ("critic", "HTTP503"), ("critic", "ok")]
    # The server's count, as the Parquet table and the printed summary state it, role by role.
    received = Counter(_roles(server))
    by_role = result.parquet("SELECT role, sum(http_requests) FROM llm_calls WHERE run_id = ? GROUP BY role")
    assert dict(by_role) == received
    printed = re.findall(r"^\s+(\w+)\s+\d+ appel\(s\),\s+(\d+) requête", format_summary(result.run_dir), re.M)
    assert {role: int(n) for role, n in printed} == received
    assert (result.run_dir / "report.md").is_file() and result.run["validated"] is True
    reliability.record(
        "500 then 503 (writer), 503 (critic)",
        "sent again (exponential backoff) within http_attempts; run completes",
        "writer 3 requests (500, 503, 200), critic 2 (503, 200); one journal record per request; "
        "run Completed and validated",
    )


def test_slow_reply_past_the_timeout_is_retried(gemini_flow: Flow, reliability: Any) -> None:
    server, faults, run = gemini_flow
    faults.add("critic", Reply.slow(3.0, Reply.json(PERFECT)))

    result = run(env={"VEILLE_REQUEST_TIMEOUT_MS": "400"})

    _assert_completed(result)
    critic = _requests_for(server, "critic")
    assert len(critic) == 2 and critic[1].received_at - critic[0].received_at < 3.0
    assert result.run["validated"] is True
    reliability.record(
        "slow reply past request_timeout_ms (critic, 3 s vs 0.4 s)",
        "client timeout (journaled as a sent request), sent again; run completes",
        "2 critic requests, the retry sent before the slow reply would have come; run Completed, validated",
    )


def test_critic_timing_out_on_every_attempt_counts_zero_and_keeps_the_report(
    gemini_flow: Flow, reliability: Any
) -> None:
    server, faults, run = gemini_flow
    faults.always("critic", Reply.slow(1.0, Reply.json(PERFECT)))

    result = run(env={"VEILLE_REQUEST_TIMEOUT_MS": "300", "VEILLE_HTTP_ATTEMPTS": "2"}, max_rounds=1)

    assert result.state.is_completed(), result.state.message  # the dossier exists: the run is not lost
    assert len(_requests_for(server, "critic")) == 2
    review = json.loads((result.run_dir / "review.json").read_text(encoding="utf-8"))
    assert review["validated"] is False and set(review["rounds"][0]["scores"].values()) == {0}
    codes = alert_codes(result)
    assert {"review.critic_failed", "review.not_validated"} <= set(codes)
    assert (result.run_dir / "report.md").is_file()
    _assert_alerts_recorded(result)
    assert {"review.critic_failed", "review.not_validated"} <= {c for c, _ in result.parquet_alerts()}
    reliability.record(
        "critic times out on every HTTP attempt",
        "critic failure = scores 0 (never a silent pass); report kept, not validated; alerts",
        "2 critic requests, round 1 scores all 0, run Completed with validated=false; "
        "review.critic_failed + review.not_validated in alerts.json and Parquet",
    )


def test_connection_refused_stops_the_run_clearly_and_keeps_the_ingestion(
    gemini_flow: Flow, reliability: Any
) -> None:
    _, _, run = gemini_flow

    base_url = closed_port_url()
    result = run(env={"VEILLE_GEMINI_BASE_URL": base_url, "VEILLE_HTTP_ATTEMPTS": "2"})

    assert result.state.is_failed()
    run_info = result.run
    assert run_info["status"] == "failed" and "ConnectError" in run_info["error"]
    [failed] = [a for a in result.alerts if a["code"] == "run.failed"]
    # One clear error naming the address, without task retries stretching it to a minute.
    assert f"cannot connect to the Gemini API at {base_url}" in failed["message"]
    assert "VEILLE_GEMINI_BASE_URL" in failed["message"]
    calls = result.calls()
    assert [c.error_class for c in calls] == ["ConnectError"] * 2  # http_attempts, no task retry
    assert [c.http_requests for c in calls] == [0, 0]  # nothing reached a server
    assert calls[0].latency_s < 15, calls[0]
    assert result.parquet("SELECT status FROM runs WHERE run_id = ?") == [("failed",)]
    assert ("run.failed", None) in result.parquet_alerts()
    # What completed before the fault is kept: the ingestion and the run folder's ingest record.
    from veille.store.readers import read_catalogue

    assert len(read_catalogue(result.warehouse / "veille.duckdb").entries) == len(CORPUS_IDS)
    assert (result.run_dir / "ingest.json").is_file()
    reliability.record(
        "connection refused (nothing listens on the API port)",
        "sent again within http_attempts, then a clear stop naming the URL (no task retries): run Failed "
        "with run.failed",
        f"{len(calls)} journalled ConnectError calls, run Failed ('{run_info['error'][:60]}…'), "
        "run + alert rows in Parquet, ingestion kept",
    )


# --- answers outside the schema: re-asked ----------------------------------------------------------


def test_malformed_json_is_re_asked(gemini_flow: Flow, reliability: Any) -> None:
    server, faults, run = gemini_flow
    faults.add("analyst", Reply.text('{"findings": [{"statement": "Kestrel'), subtask="st-1")

    result = run()

    _assert_completed(result)
    st1 = [(c.attempt, c.status) for c in result.calls() if c.subtask_id == "st-1"]
    assert st1 == [(1, "schema_error"), (2, "ok")]
    reask = _requests_for(server, "analyst", "st-1")[1].body["contents"]
    assert [t["role"] for t in reask] == ["user"]  # the prompt, then the error: never the answer
    assert "Kestrel" not in reask[0]["parts"][-1]["text"]
    assert result.findings["st-1"]["findings"]
    reliability.record(
        "malformed JSON (truncated object) from an analyst",
        "re-ask with the parse error (never the answer); run completes",
        "st-1: attempt 1 schema_error, attempt 2 ok (same call), re-ask carried the error only; run Completed",
    )


@pytest.mark.parametrize("score", [0, 7])
def test_critic_score_outside_1_to_5_is_re_asked(gemini_flow: Flow, reliability: Any, score: int) -> None:
    server, faults, run = gemini_flow
    faults.add("critic", Reply.json({**PERFECT, "clarity": score}))

    result = run()

    _assert_completed(result)
    critic = [(c.attempt, c.status) for c in result.calls() if c.role == "critic"]
    assert critic == [(1, "schema_error"), (2, "ok")]
    feedback = _requests_for(server, "critic")[1].body["contents"][-1]["parts"][-1]["text"]
    assert "clarity" in feedback and str(score) in feedback
    assert result.run["validated"] is True
    reliability.record(
        f"critic returns a score of {score} (schema: integers 1–5)",
        "schema violation → re-ask with the validation error; run completes",
        f"critic attempt 1 schema_error, attempt 2 ok; the re-ask named 'clarity' and {score}; "
        "run Completed, validated",
    )


def test_critic_out_of_range_after_every_re_ask_fails_the_round_not_the_run(
    gemini_flow: Flow, reliability: Any
) -> None:
    server, faults, run = gemini_flow
    faults.add("critic", *[Reply.json({**PERFECT, "tone": 0})] * 3)  # 1 + reask_attempts

    result = run(max_rounds=2)

    assert result.state.is_completed(), result.state.message
    review = json.loads((result.run_dir / "review.json").read_text(encoding="utf-8"))
    assert [r["valid"] for r in review["rounds"]] == [False, True]
    assert set(review["rounds"][0]["scores"].values()) == {0}
    assert len(_requests_for(server, "reviser")) == 1
    assert "review.critic_failed" in alert_codes(result)
    assert ("review.critic_failed", None) in result.parquet_alerts()
    reliability.record(
        "critic out of range (score 0) on every re-ask",
        "SchemaValidationError → round counted 0 with alert, reviser, next round",
        "3 critic attempts, round 1 all 0 + review.critic_failed, reviser once, round 2 validated; "
        "run Completed",
    )


def test_max_tokens_truncation_is_re_asked_asking_for_brevity(gemini_flow: Flow, reliability: Any) -> None:
    server, faults, run = gemini_flow
    faults.add("writer", Reply.max_tokens('{"synthesis": [{"text": "Kestrel mène sur le déb'))

    result = run()

    _assert_completed(result)
    writer = [(c.status, c.error_class) for c in result.calls() if c.role == "writer"]
    assert writer == [("schema_error", "MaxTokens"), ("ok", None)]
    feedback = _requests_for(server, "writer")[1].body["contents"][-1]["parts"][-1]["text"]
    assert "MAX_TOKENS" in feedback and "concise" in feedback
    reliability.record(
        "MAX_TOKENS truncation (writer)",
        "re-ask saying the output was cut and must be more concise; run completes",
        "writer attempt 1 schema_error/MaxTokens, attempt 2 ok; re-ask mentioned MAX_TOKENS; run Completed",
    )


def test_writer_truncated_on_every_re_ask_leaves_a_dossier_rendered_by_code(
    gemini_flow: Flow, reliability: Any
) -> None:
    server, faults, run = gemini_flow
    faults.add("writer", *[Reply.max_tokens('{"synthesis": [{"te')] * 3)

    first = run()

    # Issue 23 item 1: the structure is code's, so the night still ends with a dossier, marked.
    assert not first.state.is_failed()
    [rendered] = [a for a in first.alerts if a["code"] == "write.rendered_by_code"]
    assert rendered["severity"] == "error"
    assert len(_requests_for(server, "writer")) == 3  # schema exhaustion is not retried by the task
    assert {f["status"] for f in first.findings.values()} == {"ok"}  # every branch's findings kept
    assert first.parquet("SELECT count(*) FROM subtasks WHERE run_id = ? AND status = 'ok'") == [(3,)]
    reliability.record(
        "MAX_TOKENS on every re-ask (writer)",
        "dossier rendered by code from the findings and ledger, error alert write.rendered_by_code",
        "3 writer attempts, run completed with write.rendered_by_code, 3 branches ok in findings.json "
        "and Parquet",
    )


def test_blocked_prompt_fails_its_branch_only(gemini_flow: Flow, reliability: Any) -> None:
    server, faults, run = gemini_flow
    faults.always("analyst", Reply.blocked("PROHIBITED_CONTENT"), subtask="st-3")

    result = run()

    assert result.state.is_failed()
    assert len(_requests_for(server, "analyst", "st-3")) == 1  # not re-asked, not retried
    findings = result.findings
    assert [findings[s]["status"] for s in ("st-1", "st-2", "st-3")] == ["ok", "ok", "failed"]
    assert "BlockedPromptError" in findings["st-3"]["error"]
    codes = alert_codes(result)
    assert {"analyse.branch_failed", "run.partial_report"} <= set(codes)
    assert ("analyse.branch_failed", "st-3") in result.parquet_alerts()
    report = (result.run_dir / "report.md").read_text(encoding="utf-8")
    assert AXES[2][0] in split_sections(report)["Ce qui reste incertain"]
    reliability.record(
        "blocked prompt (promptFeedback.blockReason) on one analyst",
        "not re-asked, not retried; branch failed → partial report naming the axis + run Failed",
        "1 st-3 request; st-1/st-2 ok, st-3 failed (BlockedPromptError); report names the axis; "
        "analyse.branch_failed(st-3) + run.partial_report in alerts.json and Parquet",
    )


def test_branch_failing_after_its_retries_gives_a_partial_report_and_the_retry_reruns_only_it(
    gemini_flow: Flow, reliability: Any
) -> None:
    server, faults, run = gemini_flow
    faults.always("analyst", Reply.error(503, "backend overloaded"), subtask="st-2")

    first = run(env={"VEILLE_HTTP_ATTEMPTS": "2"})

    assert first.state.is_failed()
    st2_requests = len(_requests_for(server, "analyst", "st-2"))
    assert st2_requests == 2  # http_attempts; a task never resends a model call
    findings = first.findings
    assert [findings[s]["status"] for s in ("st-1", "st-2", "st-3")] == ["ok", "failed", "ok"]
    assert {"analyse.branch_failed", "run.partial_report"} <= set(alert_codes(first))
    assert ("analyse.branch_failed", "st-2") in first.parquet_alerts()
    _assert_alerts_recorded(first)
    assert first.run["status"] == "failed" and first.run["subtasks_failed"] == 1
    assert (first.run_dir / "report.md").is_file()

    server.reset()
    faults.heal()
    second = run()

    _assert_completed(second)
    assert {r for r in _roles(server)} >= {"analyst", "writer"}
    assert "planner" not in _roles(server)
    analysts = _requests_for(server, "analyst")
    assert len(analysts) == 1 and "Question (st-2)" in prompt_of(analysts[0].body)
    assert second.findings["st-1"] == findings["st-1"] and second.findings["st-3"] == findings["st-3"]
    reliability.record(
        "a branch raising after its retries (503 on every attempt)",
        "partial report naming the axis + alerts + run Failed; the retry reruns only that branch",
        f"st-2: {st2_requests} requests then failed; report written, run Failed, alerts in alerts.json and "
        "Parquet; rerun: 1 analyst request (st-2), 0 planner, run Completed",
    )


# --- answers that break the rules: repaired by code, with an alert -------------------------------


def test_hallucinated_ids_in_the_plan_are_removed_with_an_alert(gemini_flow: Flow, reliability: Any) -> None:
    server, faults, run = gemini_flow
    faults.add(
        "planner",
        Reply.json(
            {
                "sub_tasks": [
                    {"id": "st-1", "question": AXES[0][0], "doc_ids": ["doc-01", "doc-99", "doc-02"]},
                    {"id": "st-2", "question": AXES[1][0], "doc_ids": ["doc-41"]},
                    {"id": "st-3", "question": AXES[2][0], "doc_ids": ["doc-05", "doc-06"]},
                ],
                "excluded": ["doc-07", "doc-88"],
            }
        ),
    )

    result = run()

    assert result.state.is_completed(), result.state.message
    plan = json.loads((result.run_dir / "plan.json").read_text(encoding="utf-8"))
    planned = [st["doc_ids"] for st in plan["sub_tasks"]]
    assert planned[0] == ["doc-01", "doc-02"] and ["doc-05", "doc-06"] in planned
    placed = {i for ids in planned for i in ids}
    assert placed <= CORPUS_IDS and not placed & {"doc-99", "doc-41", "doc-88"}
    shown = {i for r in _requests_for(server, "analyst") for i in _document_ids(prompt_of(r.body))}
    assert shown == placed
    codes = alert_codes(result)
    assert codes.count("plan.unknown_ids") == 2
    assert ("plan.unknown_ids", "st-1") in result.parquet_alerts()
    assert not {s["id"] for s in _sources(result)} - CORPUS_IDS
    reliability.record(
        "hallucinated document ids in the plan (doc-99, doc-41)",
        "repair: unknown ids removed, empty sub-task dropped, alerts; analysts see valid ids only",
        "plan kept 2 sub-tasks with valid ids, analysts shown only corpus ids, plan.unknown_ids ×2 + "
        "plan.empty_subtask in alerts.json and Parquet; run Completed",
    )


@pytest.mark.parametrize(
    "answer",
    [
        {"sub_tasks": [], "excluded": []},
        {"sub_tasks": [{"id": "st-1", "question": "Q ?", "doc_ids": ["doc-99"]}]},
    ],
    ids=["no_subtask", "only_unknown_ids"],
)
def test_empty_plan_is_reasked_then_built_by_code(
    gemini_flow: Flow, reliability: Any, answer: dict[str, Any]
) -> None:
    server, faults, run = gemini_flow
    faults.always("planner", Reply.json(answer))

    result = run()

    assert result.state.is_completed() and result.run["status"] == "completed"
    roles = _roles(server)
    assert roles.count("planner") == 2 and "analyst" in roles  # one re-ask, then code's plan
    [code_plan] = [a for a in result.alerts if a["code"] == "plan.code_plan"]
    assert code_plan["severity"] == "error" and result.run["rendered_by_code"] == ["plan"]
    assert (result.run_dir / "report.md").exists()
    assert ("plan.code_plan", None) in result.parquet_alerts()
    reliability.record(
        f"empty plan ({'no sub-task' if not answer['sub_tasks'] else 'only unknown ids'})",
        "re-asked once with the validator's findings, then a plan built by code (request axes x "
        "documents sharing its vocabulary); error alert plan.code_plan",
        "2 planner requests, analysts on code's plan, run Completed with report.md, plan.code_plan in "
        "alerts.json and Parquet, run.json rendered_by_code ['plan']",
    )


def test_analyst_citing_documents_outside_its_set_is_filtered(gemini_flow: Flow, reliability: Any) -> None:
    _, faults, run = gemini_flow
    faults.add(
        "analyst",
        Reply.json(
            {
                "findings": [
                    {"statement": "Kestrel annonce 1 400 tokens/s.", "doc_ids": ["doc-01", "doc-05"]},
                    {"statement": "Tamaris est le meilleur choix.", "doc_ids": ["doc-99"]},
                    {"statement": "Le banc mesure 1 180 tokens/s.", "doc_ids": ["doc-02"]},
                ]
            }
        ),
        subtask="st-1",
    )

    result = run()

    _assert_completed(result)
    st1 = result.findings["st-1"]["findings"]
    assert [f["doc_ids"] for f in st1] == [["doc-01"], ["doc-02"]]  # doc-99's finding dropped
    assert "Tamaris est le meilleur choix." not in (result.run_dir / "report.md").read_text(encoding="utf-8")
    [alert] = [a for a in result.alerts if a["code"] == "analyse.foreign_citation"]
    assert alert["subject"] == "st-1" and "doc-05" in alert["message"] and "doc-99" in alert["message"]
    assert ("analyse.foreign_citation", "st-1") in result.parquet_alerts()
    assert "doc-99" not in {s["id"] for s in _sources(result)}
    reliability.record(
        "analyst cites documents outside its set (doc-05 of another branch, doc-99 unknown)",
        "repair: foreign citations removed, unsupported finding dropped, alert",
        "st-1 kept doc-01/doc-02 only, the doc-99 finding dropped and absent from the report, "
        "analyse.foreign_citation(st-1) in alerts.json and Parquet; run Completed",
    )


def _document_ids(prompt: str) -> list[str]:
    import re

    return re.findall(r'<document id="([^"]+)"', prompt)


def _sources(run: GeminiRun) -> list[dict[str, Any]]:
    return list(json.loads((run.run_dir / "sources.json").read_text(encoding="utf-8")))
