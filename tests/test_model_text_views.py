"""Issue 23 item 3, property: model text is data in the run's other views too. Every free string of
every role's answer (planner, analyst, incremental analyst, writer, critic, reviser, judge) is
filled with hostile text — HTML, Markdown links, images, footnotes, headings, rules, tables,
look-alike citations, bidi and control characters — and the run goes through the steps the flow
chains (plan, analyse, write, review, finalise, grade), the run folder is written as the flow writes
it, then three views are checked for code-made structure only:

- the run summary (``veille.run.summary.format_summary``, what ``veille run`` prints);
- the metrics artifact (``veille.run.metrics_page.metrics_markdown`` over the warehouse's headline);
- the log lines the flow emits: each step's note (``RunLog.keep_*``, ``branch_note``), the alerts as
  ``log_alerts`` logs them, and every record the steps log themselves (caplog).

No Prefect, no database: an ``Asker`` draws each answer from the role's wire schema for that very
request (tests/schema_strategy.py), as a schema-constrained model would; an answer the role's
validator refuses ends the call as the seam does after its attempts (SchemaValidationError, its
message built by the seam's own ``describe_invalid``), which exercises the code fallbacks too.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import unicodedata
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from pydantic import BaseModel, ValidationError

from tests.schema_strategy import from_wire_schema
from tests.test_model_text_as_data import FRAGMENTS
from tests.test_offline_fixtures import (
    SYNTHETIC_REQUEST,
    SYNTHETIC_TITLE,
    synthetic_documents,
    synthetic_planner_input,
)
from veille.alertlines import log_alerts
from veille.corpus.reference import Facts, Reference
from veille.corpus.request import Request
from veille.grid import Grid
from veille.models.base import ModelResult, SchemaValidationError, Usage
from veille.models.feedback import describe_invalid
from veille.models.wire import wire_schema
from veille.roles.analyst import Finding, Findings
from veille.roles.base import In, Out, Role
from veille.run.metrics_page import metrics_markdown
from veille.run.runlog import RunLog
from veille.run.summary import format_summary, usage_note
from veille.settings import Settings
from veille.steps.analyse import analyse_subtask, failed_analysis
from veille.steps.analyse_update import UpdateJob, update_subtask
from veille.steps.finalize import finalize_report
from veille.steps.numbering import number_findings
from veille.steps.plan import PlanUnusableError, make_plan
from veille.steps.review import review_loop
from veille.steps.write import WrittenDraft, write_draft
from veille.tasks.analyse import branch_note
from veille.tasks.grade import grade_run
from veille.tasks.outputs import write_outputs
from veille.warehouse.rows import build_tables
from veille.warehouse.summary import metrics_table

# Beyond the report's fragments: bidi isolates and overrides, zero-width joiners, C1 controls,
# Markdown that opens a block once a newline precedes it, and HTML entities of markup.
EXTRA = [
    "\u2066", "\u2067", "\u2069", "\u202a", "\u202d", "\u200d", "\ufeff", "\x85", "\x9b", "\x00", "\x07",
    "\n# Titre\n", "\n***\n", "\n___\n", "\n|---|\n", "\n> [!NOTE]\n", "[^note]: x", "<details>",
    "<a href='http://evil.example'>x</a>", "![](data:image/png;base64,AAAA)", "&#x3C;svg&#x3E;",
    "[1](http://evil.example)", "⟨b⟩", "＜script＞",
]  # fmt: skip
HOSTILE = st.lists(
    st.one_of(st.sampled_from([*FRAGMENTS, *EXTRA]), st.text(max_size=12)), min_size=1, max_size=4
).map("".join)

GRID = Grid(
    criteria={"clarity": "Phrases courtes.", "citations": "Des sources."},
    min_words=20,
    max_words=400,
    max_sentence_words=25,
    forbidden_words=("révolutionnaire",),
    mandatory_mentions=("Barzo",),
)
REFERENCE = Reference(
    dossier="## Synthèse\n\nBarzo sauvegarde à 2,6 Go/s [1].\n", facts=Facts(figures=["2,6 Go/s"])
)
REQUEST = Request(title=SYNTHETIC_TITLE, text=SYNTHETIC_REQUEST, terms=["Sauvia", "Barzo", "Quillon"])
ROLES = ("planner", "analyst", "analyst_update", "writer", "critic", "reviser", "judge")


# Strategies per schema class: a role whose schema class is cached (analyst, judge, writer…) gets the
# same class for the same request, and its strategy is found without any schema work. A class met for
# the first time (the planner and the critic build one per call) is looked up by its wire schema's
# text in from_wire_schema's own cache, computed once per class (wire_schema caches per class): the
# key used to be ``model_json_schema()`` recomputed on every answer, ~9 % of this test's CPU.
_STRATEGIES: dict[type[BaseModel], st.SearchStrategy[Any]] = {}


def _answers(schema: type[BaseModel]) -> st.SearchStrategy[Any]:
    """The answers a schema-constrained model may give, hostile strings (one strategy per schema:
    building one is what costs)."""
    strategy = _STRATEGIES.get(schema)
    if strategy is None:
        strategy = _STRATEGIES[schema] = from_wire_schema(_compact(wire_schema(schema)), HOSTILE)
    return strategy


def _compact(node: Any) -> Any:
    """The wire schema without extra keys (pydantic ignores them: no text of theirs is shown) and
    with at most three items per list: smaller answers, the same kinds of field, many more examples."""
    if isinstance(node, list):
        return [_compact(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _compact(v) for k, v in node.items()}
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = False
    if out.get("type") == "array":
        out["maxItems"] = max(int(out.get("minItems", 0)), min(int(out.get("maxItems", 3)), 3))
    return out


class HostileClient:
    """An ``Asker`` whose every answer is drawn from the role's wire schema for the request it gets,
    every free string hostile text."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.asked: list[str] = []

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> ModelResult[Out]:
        self.asked.append(role.name)
        schema = role.schema_for(data)
        answer = self.data.draw(_answers(schema), label=role.name)
        # One call in twelve or so gives up (a draw of hypothesis would pick 0 far more often).
        if zlib.crc32(json.dumps(answer, sort_keys=True).encode()) % 12 == 0:
            # Outside the schema on every attempt: the seam's error quotes the answer ("got '<…'").
            answer = self.data.draw(HOSTILE, label=f"{role.name} unusable answer")
        try:
            output = schema.model_validate(answer)
        except ValidationError as exc:  # the seam, after its attempts: the last error in the message
            raise SchemaValidationError(role.name, 3, describe_invalid(exc, "STOP")) from None
        raw = output.model_dump_json() if isinstance(output, BaseModel) else ""
        return ModelResult(
            output=output, raw_text=raw, usage=Usage(), latency_s=0.0, cost_usd=0.0, model="hostile",
            attempts=1, cache_hit=False,
        )  # fmt: skip


# --- what code writes, and what it never writes --------------------------------------------------

_MARKUP = ("<", "](", "[^")
_BLOCK_STARTS = ("#", "|", ">", "---", "***", "___", "```", "~~~")  # a heading, table, quote, rule, fence
_PARSER = MarkdownIt("commonmark").enable("table")
METRICS_HEADINGS = ["Exécution", "Par étape", "Par rôle", "Alertes", "Réutilisé et échecs"]


_INVISIBLE = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")  # control, format (bidi, zero-width), unassigned


def _characters(text: str, where: str) -> None:
    # Each distinct character's category read once (the newline splitting the lines aside), then the
    # lines holding one of the invisible ones: the same lines as reading every character of every line.
    invisible = {c for c in set(text) - {"\n"} if unicodedata.category(c) in _INVISIBLE}
    bad = [line for line in text.split("\n") if invisible and not invisible.isdisjoint(line)]
    assert not bad, (where, [ascii(line) for line in bad])


def check_plain_lines(text: str, where: str) -> None:
    """Summary and log lines: no markup opener, no control or bidi character, and no line that a
    model opened (every line starts with code's words: a model's text never starts one)."""
    _characters(text, where)
    marked = [line for line in text.splitlines() if any(m in line for m in _MARKUP)]
    assert not marked, (where, marked)
    opened = [line for line in text.splitlines() if line.strip().startswith(_BLOCK_STARTS)]
    assert not opened, (where, opened)


def check_metrics(markdown: str) -> None:
    _characters(markdown, "metrics")
    marked = [line for line in markdown.splitlines() if any(m in line for m in _MARKUP)]
    assert not marked, ("metrics", marked)
    tokens = _PARSER.parse(markdown)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert not kinds & {"link_open", "image", "html_block", "html_inline", "hr", "fence", "blockquote_open"}
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == METRICS_HEADINGS, headings
    for line in markdown.splitlines():  # every table row has its header's cells (no model "|")
        if line.startswith("|"):
            cells = [c for c in _split_cells(line)]
            assert len(cells) in (2, 4, 8), line


def _split_cells(line: str) -> list[str]:
    out, cell, escaped = [], "", False
    for char in line.strip()[1:-1]:
        if char == "|" and not escaped:
            out.append(cell)
            cell = ""
        else:
            cell += char
        escaped = char == "\\" and not escaped
    return [*out, cell]


# --- the run, step by step, as the flow chains them ------------------------------------------------


@cache
def _settings() -> Settings:
    """Read from the environment once, in the test: the same for every example (runs_dir and the
    other folders are properties of warehouse_dir, set per example)."""
    return Settings()


def _run(tmp: Path, client: HostileClient) -> tuple[Path, list[str]]:
    """The steps of the flow on the synthetic corpus, the run folder written; returns the folder and
    the log lines the flow and its tasks emit from step notes."""
    settings = _settings().model_copy(update={"warehouse_dir": tmp / "warehouse"})
    run = RunLog.start(settings)
    log: list[str] = []
    try:
        planned = make_plan(client, synthetic_planner_input(max_subtasks=2, max_docs=3), reask=True)
    except PlanUnusableError:  # nothing usable left even for code: the run stops with its alert
        return _written(run, log, client), log
    log.append(f"plan: {run.keep_plan(planned)}; {usage_note([], 'planner')}")
    analyses = []
    for number, sub_task in enumerate(planned.plan.sub_tasks):
        documents = synthetic_documents(list(sub_task.doc_ids))
        try:
            if number == 1 and len(documents) > 1:  # the second branch incremental: one new document
                previous = Findings(
                    findings=[Finding(statement="Barzo : 2,6 Go/s.", doc_ids=[documents[0].id])]
                )
                job = UpdateJob(new_ids=[documents[-1].id], previous=previous)
                analysis = update_subtask(client, sub_task, documents, job)
            else:
                analysis = analyse_subtask(client, sub_task, documents, budget=4000)
        except SchemaValidationError as exc:
            analysis = failed_analysis(sub_task, exc)
            # Prefect's line for the failed task run (veille.ops.logfilter: type and message).
            log.append(f"Task run failed with exception: {type(exc).__name__}: {exc}")
        log.append(branch_note(sub_task.id, len(documents), analysis, client))
        analyses.append(analysis)
    log.append(f"analyse: {run.keep_analyses(analyses)}")
    ok = [a for a in analyses if a.status == "ok"]
    if not ok:
        return _written(run, log, client), log
    cited = {i for a in ok for f in a.findings.findings for i in f.doc_ids}
    cited |= {i for a in ok for c in a.findings.contradictions for i in (*c.doc_ids, c.retained)}
    metadata = {d.id: d for d in synthetic_documents(sorted(cited))}
    data, sources = number_findings(
        ok, metadata, request_title=REQUEST.title, request=REQUEST.text, mandatory_mentions=["Barzo"],
        min_words=GRID.min_words, max_words=GRID.max_words,
    )  # fmt: skip
    dossier, alerts = write_draft(client, data)
    draft = WrittenDraft(dossier=dossier, draft="", sources=sources, writer_input=data, alerts=alerts)
    log.append(f"write: {run.keep_draft(draft)}")
    reviewed = run.keep_review(
        review_loop(
            client, dossier, grid=GRID, sources=sources, request=REQUEST.text, max_rounds=2, axes=data.axes
        )
    )
    final = finalize_report(REQUEST.title, reviewed.final_dossier, sources, data.axes, run.failed_questions())
    log.append(f"review: {run.keep_final(final)}")
    folder = _written(run, log, client)
    try:
        log.append(f"grade: {run.keep_grades(grade_run.fn(folder, REFERENCE, REQUEST, client))}")
    except Exception as exc:  # as RunLog.grading logs it
        log.append(f"grade: failed ({type(exc).__name__}: {exc})")
        with run.grading(logging.getLogger("veille.test")):
            raise
    return folder, log


def _written(run: RunLog, log: list[str], client: HostileClient) -> Path:
    info = run.info("scripted", [])
    write_outputs.fn(run.folder, info, **run.outputs())
    return run.folder.path


def _alert_log(path: Path) -> list[str]:
    lines: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger("veille.test.alerts")
    logger.propagate, logger.handlers = False, [_Keep()]
    log_alerts(logger, json.loads((path / "alerts.json").read_text(encoding="utf-8")))
    return lines


class _Lines(logging.Handler):
    """Every record the steps log under ``veille`` (the flow's run logger gets the same text)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


ASKED: dict[str, int] = dict.fromkeys(ROLES, 0)  # examples in which each role answered


@settings(
    max_examples=int(os.environ.get("VIEWS_N", "340")),
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.generate] + ([Phase.shrink] if os.environ.get("VIEWS_SHRINK") else []),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def _views_hold(base: Path, data: st.DataObject) -> None:
    client = HostileClient(data)
    handler, logger = _Lines(), logging.getLogger("veille")
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.DEBUG
    try:
        folder, notes = _run(Path(tempfile.mkdtemp(dir=base)), client)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    check_plain_lines(format_summary(folder), "summary")
    tables = build_tables(folder)
    summary = tables["runs"].to_pylist()[0]
    alerts = tables["alerts"].to_pylist()
    check_metrics(metrics_markdown(folder, metrics_table(summary, alerts), None))
    check_plain_lines("\n".join([*notes, *handler.lines, *_alert_log(folder)]), "log")
    shutil.rmtree(folder.parent.parent, ignore_errors=True)
    for role in set(client.asked):
        ASKED[role] += 1


@pytest.mark.timeout(900)
def test_every_role_answer_hostile_the_summary_metrics_and_logs_show_only_code_structure(
    tmp_path: Path,
) -> None:
    for role in ASKED:
        ASKED[role] = 0
    _views_hold(tmp_path)
    # Each role answered with hostile text in at least 300 examples (the planner in all of them; a
    # later role only when the steps before it left it something to do).
    assert min(ASKED.values()) >= 300, ASKED
