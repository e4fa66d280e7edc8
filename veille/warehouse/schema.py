"""The warehouse's table schemas and their ordered migrations registry (the migrations themselves
in :mod:`veille.warehouse.migrations`, re-exported here).

Schema changes bump :data:`SCHEMA_VERSION` and register a :class:`Migration` (ordered); the views
read partitions with ``union_by_name`` so old files stay readable, and :func:`upgrade_table`
brings an old file's table to the current schema in Python. docs/warehouse.md documents every
column (a test checks it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pyarrow as pa

from veille.warehouse.migrations import (
    MIGRATIONS,
    Migration,
    file_schema_version,
    register_migration,
    renamed_columns,
    upgrade_table,
)

__all__ = [
    "MIGRATIONS",
    "SAFE_NAME_RE",
    "SCHEMA_VERSION",
    "TABLES",
    "TABLE_ORDER",
    "Migration",
    "file_schema_version",
    "register_migration",
    "renamed_columns",
    "upgrade_table",
]

SCHEMA_VERSION = 11
# Run ids become file names: nothing that could climb out of a partition directory.
SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

_TS = pa.timestamp("us", tz="UTC")
_STR_LIST = pa.list_(pa.string())


def _schema(name: str, fields: Sequence[pa.Field]) -> pa.Schema:
    return pa.schema(fields).with_metadata(
        {"veille.table": name, "veille.schema_version": str(SCHEMA_VERSION)}
    )


def _f(name: str, type_: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable)


TABLES: dict[str, pa.Schema] = {
    "runs": _schema(
        "runs",
        [
            _f("run_id", pa.string(), False),
            _f("flow_run_id", pa.string()),
            # Attempt of the flow run (Prefect's run count: a Retry is the same flow run, attempt 2); v7 name.
            _f("flow_run_attempt", pa.int32()),
            _f("deployment", pa.string()),
            _f("status", pa.string(), False),
            _f("started_at", _TS),
            _f("finished_at", _TS),
            _f("duration_s", pa.float64()),
            _f("corpus_dir", pa.string()),
            _f("request_title", pa.string()),
            _f("backend", pa.string()),
            _f("models", pa.map_(pa.string(), pa.string())),
            _f("validated", pa.bool_()),
            _f("rounds", pa.int32()),
            _f("subtasks_total", pa.int32()),
            _f("subtasks_failed", pa.int32()),
            # Per-run summary, so trend queries read one small file per run (see docs/warehouse.md).
            _f("calls", pa.int32(), False),
            # llm_calls rows: backend requests of every call (v7 name)
            _f("call_attempts", pa.int32(), False),
            _f("failed_calls", pa.int32(), False),
            _f("input_tokens", pa.int64(), False),
            _f("output_tokens", pa.int64(), False),
            _f("reasoning_tokens", pa.int64(), False),
            _f("cache_read_tokens", pa.int64(), False),
            _f("tokens_estimated", pa.bool_(), False),
            _f("cost_usd", pa.float64(), False),
            _f("cost_complete", pa.bool_(), False),
            _f("alerts", pa.int32(), False),
            _f("alerts_error", pa.int32(), False),
            _f("alerts_warning", pa.int32(), False),
            _f("final_scores", pa.map_(pa.string(), pa.float64())),
            _f("revision_gain", pa.float64()),  # judge(final) - judge(round 1), see view revision_gain
            _f("grade_status", pa.string()),  # ok | partial | failed | none (veille.gradestatus); v2
            _f("reused_from", pa.string()),  # v11: the night whose dossier this one reused (nightskip)
            _f("report_words", pa.int32()),
            _f("missing_files", _STR_LIST),
            _f("settings_json", pa.string()),
            _f("schema_version", pa.int32(), False),
            _f("recorded_at", _TS, False),
        ],
    ),
    "llm_calls": _schema(
        "llm_calls",
        [
            _f("run_id", pa.string(), False),
            _f("seq", pa.int32(), False),
            _f("call_id", pa.string(), False),
            _f("call_attempt", pa.int32(), False),  # 1-based request of the call (re-asks, retries); v7 name
            _f("flow_run_id", pa.string()),
            _f("task_run_id", pa.string()),
            _f("role", pa.string(), False),
            _f("subtask_id", pa.string()),
            _f("backend", pa.string()),
            _f("model", pa.string()),
            _f("input_tokens", pa.int64(), False),
            _f("output_tokens", pa.int64(), False),
            _f("reasoning_tokens", pa.int64(), False),
            _f("cache_read_tokens", pa.int64(), False),
            _f("estimated", pa.bool_(), False),
            _f("cost_usd", pa.float64()),
            # v5: Google Search grounding (the researcher, --web): queries run, and their fee (in cost_usd)
            _f("search_queries", pa.int32()),
            _f("grounding_cost_usd", pa.float64()),
            _f("latency_s", pa.float64(), False),
            _f("status", pa.string(), False),
            _f("error_class", pa.string()),
            _f("error_message", pa.string()),
            _f("cache_hit", pa.bool_(), False),
            # v6: HTTP requests this attempt sent (0 or 1; 429s, 5xx and client time-outs included)
            _f("http_requests", pa.int32()),
            _f("started_at", _TS),
        ],
    ),
    "plans": _schema(
        "plans",
        [
            _f("run_id", pa.string(), False),
            _f("subtasks", pa.int32(), False),
            _f("documents", pa.int32(), False),
            _f("excluded", _STR_LIST),
            _f("plan_json", pa.string()),
            _f("relevant_not_read", _STR_LIST),  # v9 (veille.warehouse.reading_columns)
        ],
    ),
    "subtasks": _schema(
        "subtasks",
        [
            _f("run_id", pa.string(), False),
            _f("subtask_id", pa.string(), False),
            _f("question", pa.string()),
            _f("doc_ids", _STR_LIST),
            _f("status", pa.string()),
            _f("error", pa.string()),
            _f("findings", pa.int32()),
            _f("contradictions", pa.int32()),
            _f("open_questions", pa.int32()),
            _f("figures", pa.int32()),
            _f("reading_budget", pa.int32()),  # v9, as relevant_not_read
            _f("docs_read_in_part", _STR_LIST),
        ],
    ),
    "alerts": _schema(
        "alerts",
        [
            _f("run_id", pa.string(), False),
            _f("seq", pa.int32(), False),
            _f("code", pa.string(), False),
            _f("severity", pa.string(), False),
            _f("stage", pa.string()),
            _f("message", pa.string()),
            _f("subject", pa.string()),
            _f("subjects", _STR_LIST),  # every subject of a grouped alert (v4)
        ],
    ),
    "review_rounds": _schema(
        "review_rounds",
        [
            _f("run_id", pa.string(), False),
            _f("round", pa.int32(), False),
            _f("mean", pa.float64()),
            _f("valid", pa.bool_()),
            _f("scores", pa.map_(pa.string(), pa.int32())),
            _f("instructions", _STR_LIST),
            _f("word_count", pa.int32()),
            _f("draft", pa.string()),
        ],
    ),
    "grader_scores": _schema(
        "grader_scores",
        [
            _f("run_id", pa.string(), False),
            _f("target", pa.string(), False),
            _f("grader", pa.string(), False),
            _f("version", pa.string(), False),
            _f("score", pa.float64()),
            _f("model", pa.string()),
            _f("details_json", pa.string()),
            _f("carried_over", pa.bool_()),  # v10: a score carried over from an earlier night
        ],
    ),
    "reports": _schema(
        "reports",
        [
            _f("run_id", pa.string(), False),
            _f("markdown", pa.string()),
            _f("sha256", pa.string()),
            _f("chars", pa.int32(), False),
            _f("words", pa.int32(), False),
            _f("sections", _STR_LIST),
            _f("citations", pa.int32(), False),
            _f("sources", pa.int32(), False),
            _f("invalid_citations", pa.list_(pa.int32())),
        ],
    ),
    # v5: the numbered sources of the report (sources.json): corpus documents and web pages.
    "sources": _schema(
        "sources",
        [
            _f("run_id", pa.string(), False),
            _f("number", pa.int32(), False),
            _f("source_id", pa.string(), False),
            _f("kind", pa.string(), False),
            _f("title", pa.string()),
            _f("date", pa.string()),
            # v8: where a corpus document's date came from (veille.docdates.DATE_ORIGINS), issue 36.
            _f("date_origin", pa.string()),
            _f("source_type", pa.string()),
            _f("url", pa.string()),
            _f("domain", pa.string()),
            _f("retrieved_at", _TS),
            _f("flag", pa.string()),
        ],
    ),
    "documents": _schema(
        "documents",
        [
            _f("run_id", pa.string(), False),
            _f("doc_id", pa.string(), False),
            _f("content_hash", pa.string()),
        ],
    ),
}


# Written last: its file is the commit marker of a run.
TABLE_ORDER = [name for name in TABLES if name != "runs"] + ["runs"]
