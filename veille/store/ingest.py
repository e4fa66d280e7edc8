"""Incremental ingestion of a corpus folder into the corpus database (DuckDB).

Ingestion runs in ONE transaction: if anything fails (strict mode, no valid document, I/O error),
the database is left exactly as the previous run committed it. Files are streamed in batches (parse a
chunk, insert it as an Arrow table) so memory stays flat at 100k documents; see bench/ingest_scale.py.

Incremental contract: a document is *unchanged* when its content hash (sha256 of the raw file) equals
the stored one. As a shortcut, a file whose (size, mtime_ns) equal those stored for the same path, in
the same corpus folder as the previous run, is counted unchanged without being re-read; pass
``trust_file_stat=False`` to hash every file.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from veille.alerts import Alert, alert
from veille.corpus.document import DEFAULT_MAX_DOC_BYTES, KNOWN_FIELDS, DocumentFields, parse_document_fields
from veille.corpus.errors import CorpusError, StrictModeError
from veille.corpus.frontmatter import read_file
from veille.corpus.reference import Reference, unknown_reference_ids
from veille.run.killpoints import kill_point
from veille.store.connection import read_write, set_aside_unreadable
from veille.store.files import check_corpus
from veille.store.queries import read_sql, utcnow
from veille.store.rows import _DOC_SCHEMA, _LOG_SCHEMA, _TOUCH_SCHEMA, _columns, _load_state, _Stored

__all__ = ["DEFAULT_BATCH_SIZE", "IngestReport", "ingest_corpus"]

DEFAULT_BATCH_SIZE = 2_000


@dataclass
class IngestReport:
    added: int
    updated: int
    unchanged: int
    removed: int
    skipped: int  # invalid files, not loaded
    documents: int  # valid, non-removed documents in the database after the run
    alerts: list[Alert]
    run_id: str = ""
    corpus_dir: str = ""
    database: str = ""
    duration_s: float = 0.0

    @property
    def ingested(self) -> int:
        """Files whose content was loaded by this run (added + updated)."""
        return self.added + self.updated


def _future_date_alerts(con: duckdb.DuckDBPyConnection, corpus_dir: Path, now: datetime) -> list[Alert]:
    """Valid documents dated after tomorrow (UTC; one day of slack for time zones): loaded, but a typo
    such as 2062 for 2026 would make them the most recent source, so each run says so."""
    today = now.date()
    rows = con.execute(read_sql("future_documents.sql"), {"today": today + timedelta(days=1)}).fetchall()
    return [
        alert(
            "ingest",
            "ingest.future_date",
            f"{corpus_dir / path}: field 'date': {date.isoformat()} is after today ({today.isoformat()}, UTC); "
            "expected the document's publication date (document loaded: check for a typo)",
            severity="warning",
            subject=path,
        )
        for _doc_id, path, date in rows
    ]


def _unknown_fields_alert(path: Path | str, rel: str, fields: Sequence[str]) -> Alert:
    names = ", ".join(repr(f) for f in fields)
    known = ", ".join(sorted(KNOWN_FIELDS))
    return alert(
        "ingest",
        "ingest.unknown_field",
        f"{path}: unknown front-matter field(s) {names} ignored (document loaded); expected only {known}",
        severity="warning",
        subject=rel,
    )


class _Ingestion:
    """One ingestion run over an open connection, inside the caller's transaction."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        corpus_dir: Path,
        *,
        run_id: str,
        now: datetime,
        max_doc_bytes: int,
        stat_shortcut: bool,
    ) -> None:
        self.con = con
        self.corpus_dir = corpus_dir
        self.docs_dir = os.path.join(corpus_dir, "docs")  # str paths: pathlib costs ~2 s per 100k files
        self.run_id = run_id
        self.now = now
        self.max_doc_bytes = max_doc_bytes
        self.stat_shortcut = stat_shortcut
        self.stored, self.by_path = _load_state(con)
        self.counts = dict.fromkeys(("added", "updated", "unchanged", "removed", "skipped"), 0)
        self.errors: list[CorpusError] = []
        self.alerts: list[Alert] = []
        self.claimed: dict[str, str] = {}  # doc id -> rel path of the file that holds it in this run
        self.log = _columns(_LOG_SCHEMA)
        self.rows: list[tuple[Any, ...]] = []  # documents to insert, one tuple per row in _DOC_SCHEMA order
        self.replaced: list[str] = []  # ids in self.docs that already have a row (changed or re-added)
        self.touch = _columns(_TOUCH_SCHEMA)

    def record(
        self, rel: str | None, doc_id: str | None, event: str, code: str | None, msg: str | None
    ) -> None:
        for key, value in zip(
            _LOG_SCHEMA.names, (self.run_id, self.now, rel, doc_id, event, code, msg), strict=True
        ):
            self.log[key].append(value)

    def process(self, name: str) -> None:
        path, rel = os.path.join(self.docs_dir, name), "docs/" + name
        st: os.stat_result | None
        try:
            st = os.stat(path)
        except OSError:
            st = None  # read_file reports why (symlink loop, dangling link...)
        if self.stat_shortcut and st is not None and self._unchanged_by_stat(path, rel, st):
            return
        doc = self._parse(path, rel, st)
        if doc is None:
            return
        assert st is not None  # read_file succeeded
        self._classify(doc, path, rel, st)

    def refuse(self, errors: Sequence[CorpusError]) -> None:
        """Files refused by the listing (links leaving the corpus; their alerts are already raised)."""
        for exc in errors:
            rel = "docs/" + exc.path.name
            self.errors.append(exc)
            self.counts["skipped"] += 1
            self.record(rel, None, "skipped", "ingest.symlink_outside", str(exc))

    def _unchanged_by_stat(self, path: str, rel: str, st: os.stat_result) -> bool:
        """Shortcut: same path, size and mtime as stored for this corpus -> unchanged, not re-read."""
        known_id = self.by_path.get(rel)
        prev = self.stored.get(known_id) if known_id is not None else None
        if (
            known_id is not None
            and prev is not None
            and (prev.file_size, prev.file_mtime_ns) == (st.st_size, st.st_mtime_ns)
            and known_id not in self.claimed
        ):
            self.claimed[known_id] = rel
            self.counts["unchanged"] += 1
            if prev.unknown_fields:
                self.alerts.append(_unknown_fields_alert(path, rel, prev.unknown_fields))
            return True
        return False

    def _parse(self, path: str, rel: str, st: os.stat_result | None) -> DocumentFields | None:
        """The validated document, or None after recording why the file is skipped."""
        try:
            raw = read_file(path, max_bytes=self.max_doc_bytes, st=st)
            doc = parse_document_fields(raw, path)
            if doc.id in self.claimed:
                other = self.claimed[doc.id]
                raise CorpusError(
                    path,
                    "id",
                    f"an id used by one file only (rename it in {other} or {rel})",
                    f"duplicate id {doc.id!r}: {self.corpus_dir / other} already uses it",
                )
        except CorpusError as exc:
            self.errors.append(exc.with_traceback(None))  # frames would keep the connection alive
            self.counts["skipped"] += 1
            code = (
                "ingest.duplicate_id" if exc.problem.startswith("duplicate id") else "ingest.invalid_document"
            )
            self.alerts.append(alert("ingest", code, str(exc), severity="error", subject=rel))
            self.record(rel, None, "skipped", code, str(exc))
            return None
        return doc

    def _classify(self, doc: DocumentFields, path: str, rel: str, st: os.stat_result) -> None:
        """Added, updated or unchanged against the stored state; buffers the rows to write."""
        self.claimed[doc.id] = rel
        if doc.unknown_fields:
            alert = _unknown_fields_alert(path, rel, doc.unknown_fields)
            self.alerts.append(alert)
            self.record(rel, doc.id, "warning", alert.code, alert.message)
        prev = self.stored.get(doc.id)
        if prev is None or not prev.valid:
            self.counts["added"] += 1
            self.record(rel, doc.id, "added", None, None)
            self._add_row(doc, rel, st, prev)
        elif prev.content_hash != doc.content_hash:
            self.counts["updated"] += 1
            self.record(rel, doc.id, "updated", None, None)
            self._add_row(doc, rel, st, prev)
        else:
            self.counts["unchanged"] += 1
            if (prev.path, prev.file_size, prev.file_mtime_ns) != (rel, st.st_size, st.st_mtime_ns):
                for key, value in zip(
                    _TOUCH_SCHEMA.names, (doc.id, rel, st.st_size, st.st_mtime_ns), strict=True
                ):
                    self.touch[key].append(value)

    def _add_row(self, doc: DocumentFields, rel: str, st: os.stat_result, prev: _Stored | None) -> None:
        if prev is not None:
            self.replaced.append(doc.id)
        self.rows.append(
            (
                *doc[:10],  # id .. content_hash
                rel,
                st.st_size,
                st.st_mtime_ns,
                doc.unknown_fields,
                "valid",
                prev.ingested_at if prev is not None else self.now,  # first ingestion date survives updates
                self.now,
            )
        )

    def flush(self) -> None:
        """Write the buffered batch (called every ``batch_size`` files and at the end)."""
        if self.replaced:
            self.con.execute(read_sql("delete_documents.sql"), {"ids": self.replaced})
        if self.rows:
            columns = list(zip(*self.rows, strict=True))
            table = pa.Table.from_arrays(
                [pa.array(col, type=f.type) for col, f in zip(columns, _DOC_SCHEMA, strict=True)],
                schema=_DOC_SCHEMA,
            )
            # Relation.insert_into keeps memory flat across batches; a registered view did not (bench).
            self.con.from_arrow(table).insert_into("documents")
        if self.touch["id"]:
            self.con.register("touch_batch", pa.table(self.touch, schema=_TOUCH_SCHEMA))
            try:
                self.con.execute(read_sql("touch_documents.sql"))
            finally:
                self.con.unregister("touch_batch")
        self.rows, self.touch, self.replaced = [], _columns(_TOUCH_SCHEMA), []

    def mark_removed(self) -> None:
        removed = sorted(i for i, prev in self.stored.items() if prev.valid and i not in self.claimed)
        if removed:
            self.con.execute(read_sql("mark_removed.sql"), {"ids": removed, "now": self.now})
        for doc_id in removed:
            self.record(self.stored[doc_id].path, doc_id, "removed", None, None)
        self.counts["removed"] = len(removed)

    def write_log(self) -> None:
        if self.log["run_id"]:
            self.con.from_arrow(pa.table(self.log, schema=_LOG_SCHEMA)).insert_into("ingest_log")


def ingest_corpus(
    corpus_dir: Path,
    db_path: Path,
    *,
    strict: bool = False,
    max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES,
    batch_size: int = DEFAULT_BATCH_SIZE,
    trust_file_stat: bool = True,
) -> IngestReport:
    """Load ``<corpus_dir>/docs/*.md`` into the DuckDB file ``db_path`` (created if missing).

    Invalid documents are skipped with an ``ingest.invalid_document`` (or ``ingest.duplicate_id``) alert;
    with ``strict=True`` every file is still checked, then :class:`StrictModeError` is raised for the
    first invalid one (its message counts the others) and nothing is written. Raises CorpusError (and
    writes nothing) when the corpus folder, ``request.md`` or ``docs/`` is missing or invalid, or when
    no document is valid.
    """
    try:
        return _ingest_corpus(corpus_dir, db_path, strict, max_doc_bytes, batch_size, trust_file_stat)
    except CorpusError as exc:
        # Bad input, not a bug: drop the inner frames, which hold the (closed) DuckDB connection alive as
        # long as the exception lives (Prefect keeps it in the failed state).
        raise exc.with_traceback(None) from None


def _ingest_corpus(
    corpus_dir: Path, db_path: Path, strict: bool, max_doc_bytes: int, batch_size: int, trust_file_stat: bool
) -> IngestReport:
    started, clock = utcnow(), time.perf_counter()
    corpus_dir, db_path = Path(corpus_dir), Path(db_path)
    alerts: list[Alert] = []
    refused: list[CorpusError] = []  # links leaving the corpus: invalid files (strict mode fails on them)
    names, reference = check_corpus(corpus_dir, strict, alerts, refused)

    db_path.parent.mkdir(parents=True, exist_ok=True)
    if (aside := set_aside_unreadable(db_path)) is not None:  # a cache of the corpus files: rebuilt
        alerts.append(
            alert(
                "ingest",
                "ingest.database_rebuilt",
                f"{db_path}: not a readable DuckDB database; moved aside to {aside.name} and rebuilt "
                "from the corpus files",
                severity="warning",
            )
        )
    with read_write(db_path) as con:
        last = con.execute(read_sql("last_ingest_corpus.sql")).fetchone()
        corpus_key = str(corpus_dir.resolve())
        run = _Ingestion(
            con,
            corpus_dir,
            run_id=uuid.uuid4().hex,
            now=utcnow(),
            max_doc_bytes=max_doc_bytes,
            stat_shortcut=trust_file_stat and last is not None and last[0] == corpus_key,
        )
        con.execute("BEGIN TRANSACTION")
        try:
            run.refuse(refused)
            _load_documents(run, names, batch_size=batch_size, strict=strict)
            alerts.extend(_future_date_alerts(con, corpus_dir, run.now))
            if reference is not None:
                alerts.extend(_reference_alerts(corpus_dir, reference, run.claimed))
            run.write_log()
            documents = _record_run(run, corpus_key=corpus_key, strict=strict, started=started)
            kill_point("ingest")  # crash tests: everything written, nothing committed
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    return IngestReport(
        **run.counts,
        documents=documents,
        alerts=alerts + run.alerts,
        run_id=run.run_id,
        corpus_dir=str(corpus_dir),
        database=str(db_path),
        duration_s=round(time.perf_counter() - clock, 3),
    )


def _load_documents(run: _Ingestion, names: list[str], *, batch_size: int, strict: bool) -> None:
    """Every file, batch by batch, then the removed documents; raises when strict mode or no valid document
    forbids the commit."""
    for start in range(0, len(names), batch_size):
        for name in names[start : start + batch_size]:
            run.process(name)
        run.flush()
    if run.errors and strict:
        raise StrictModeError(sorted(run.errors, key=lambda e: str(e.path)))
    if not run.claimed:
        raise CorpusError(
            run.corpus_dir / "docs",
            None,
            "at least one valid document",
            f"none of the {len(names)} document file(s) is valid (first error: {run.errors[0]})",
        )
    run.mark_removed()


def _record_run(run: _Ingestion, *, corpus_key: str, strict: bool, started: datetime) -> int:
    """Insert the ingest_runs row; returns the number of valid documents after this run."""
    row = run.con.execute(read_sql("count_valid_documents.sql")).fetchone()
    documents = int(row[0]) if row else 0
    run.con.execute(
        read_sql("insert_ingest_run.sql"),
        {
            "run_id": run.run_id,
            "corpus_dir": corpus_key,
            "strict": strict,
            "started_at": started,
            "finished_at": utcnow(),
            **run.counts,
            "documents": documents,
        },
    )
    return documents


def _reference_alerts(corpus_dir: Path, reference: Reference, valid_ids: Collection[str]) -> list[Alert]:
    missing = unknown_reference_ids(reference, valid_ids)
    if not missing:
        return []
    return [
        alert(
            "ingest",
            "ingest.reference_unknown_ids",
            f"{corpus_dir / 'reference' / 'facts.yaml'}: names document(s) {', '.join(missing)} "
            "that are not valid documents of the corpus; expected ids from docs/*.md",
            severity="warning",
            subject="reference/facts.yaml",
        )
    ]
