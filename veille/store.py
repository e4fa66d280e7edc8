"""The corpus database (DuckDB): incremental ingestion, the catalogue, document fetches.

Ingestion runs in ONE transaction: if anything fails (strict mode, no valid document, I/O error),
the database is left exactly as the previous run committed it. Files are streamed in batches (parse a
chunk, insert it as an Arrow table) so memory stays flat at 100k documents; see bench/ingest_scale.py.

Incremental contract: a document is *unchanged* when its content hash (sha256 of the raw file) equals
the stored one. As a shortcut, a file whose (size, mtime_ns) equal those stored for the same path, in
the same corpus folder as the previous run, is counted unchanged without being re-read; pass
``trust_file_stat=False`` to hash every file.

Readers (catalogue, fetch) open their own read-only connection per call: never share a DuckDB
connection across threads. Within one process, do not read while an ingestion is writing (DuckDB
refuses a read-only and a read-write connection to the same file in one process).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa

from veille.alerts import Alert
from veille.corpus import (
    DEFAULT_MAX_DOC_BYTES,
    KNOWN_FIELDS,
    CorpusError,
    DocumentFields,
    Reference,
    StrictModeError,
    load_reference,
    parse_document_fields,
    parse_request,
    read_file,
    request_path,
    unknown_reference_ids,
)
from veille.dblock import retry_on_lock
from veille.killpoints import kill_point
from veille.roles.analyst import DocumentText
from veille.roles.planner import CatalogueEntry
from veille.tokens import estimate_tokens

__all__ = [
    "MIGRATIONS",
    "Catalogue",
    "IngestReport",
    "document_snapshot",
    "fetch_documents",
    "ingest_corpus",
    "migrate",
    "read_catalogue",
    "schema_version",
]

# Registered in order; a migration is applied once, in its own transaction, and recorded in
# schema_migrations. Never edit an applied migration: add the next one.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, "migration_001_corpus_schema.sql"),
    (2, "migration_002_catalogue_view.sql"),
)

DEFAULT_BATCH_SIZE = 2_000


def _sql(name: str) -> str:
    return resources.files("veille").joinpath("sql", name).read_text(encoding="utf-8")


def _utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


# ------------------------------------------------------------------------------------------ results
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


@dataclass
class Catalogue:
    entries: list[CatalogueEntry]
    text: str  # one line per document, ordered by id
    token_estimate: int  # veille.tokens.estimate_tokens(text)
    with_summaries: bool = False

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


# ----------------------------------------------------------------------------------------- migrations
def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply pending migrations on a read-write connection; returns the versions applied now."""
    con.execute(_sql("schema_migrations.sql"))
    applied = {row[0] for row in con.execute(_sql("applied_migrations.sql")).fetchall()}
    done: list[int] = []
    for version, name in MIGRATIONS:
        if version in applied:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(_sql(name))
            con.execute(
                _sql("record_migration.sql"), {"version": version, "name": name, "applied_at": _utcnow()}
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        done.append(version)
    return done


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    try:
        row = con.execute(_sql("schema_version.sql")).fetchone()
    except duckdb.CatalogException:
        return 0
    return int(row[0]) if row and row[0] is not None else 0


@contextmanager
def _read_only(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    db_path = Path(db_path)
    if not db_path.is_file():
        raise FileNotFoundError(
            f"no corpus database at {db_path}: run `veille ingest` (or `veille run`) first"
        )
    # Another process ingesting holds the file: wait for it (veille.dblock) instead of failing.
    con = retry_on_lock(lambda: duckdb.connect(str(db_path), read_only=True), db_path)
    try:
        version, latest = schema_version(con), MIGRATIONS[-1][0]
        if version < latest:
            raise RuntimeError(
                f"corpus database {db_path} has schema version {version}, this code needs {latest}: "
                "run `veille ingest` to migrate it"
            )
        yield con
    finally:
        con.close()


# ------------------------------------------------------------------------------------------ ingestion
class _Stored(NamedTuple):
    path: str
    content_hash: str
    file_size: int | None
    file_mtime_ns: int | None
    unknown_fields: list[str]
    valid: bool
    ingested_at: datetime


# Column order = table order (migration_001): rows are appended with Relation.insert_into, which maps
# columns by position. tests/test_ingest.py checks the two stay in step.
_DOC_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("date", pa.date32()),
        ("source_type", pa.string()),
        ("title", pa.string()),
        ("summary", pa.string()),
        ("url", pa.string()),
        ("author", pa.string()),
        ("body", pa.string()),
        ("word_count", pa.int32()),
        ("content_hash", pa.string()),
        ("path", pa.string()),
        ("file_size", pa.int64()),
        ("file_mtime_ns", pa.int64()),
        ("unknown_fields", pa.list_(pa.string())),
        ("status", pa.string()),
        ("ingested_at", pa.timestamp("us")),
        ("updated_at", pa.timestamp("us")),
    ]
)
_TOUCH_SCHEMA = pa.schema(
    [("id", pa.string()), ("path", pa.string()), ("file_size", pa.int64()), ("file_mtime_ns", pa.int64())]
)
_LOG_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("logged_at", pa.timestamp("us")),
        ("path", pa.string()),
        ("doc_id", pa.string()),
        ("event", pa.string()),
        ("code", pa.string()),
        ("message", pa.string()),
    ]
)


def _list_document_files(docs_dir: Path, alerts: list[Alert]) -> list[str]:
    """Names of ``docs/*.md`` entries, sorted. Hidden files are ignored silently, others with an info alert."""
    if not docs_dir.is_dir():
        raise CorpusError(
            docs_dir, None, "a docs/ folder holding one Markdown file per document", "docs folder not found"
        )
    names: list[str] = []
    with os.scandir(docs_dir) as it:
        for entry in it:
            if entry.name.startswith("."):
                continue  # editor swap files, .DS_Store, .gitkeep
            if entry.name.endswith(".md"):
                names.append(entry.name)  # directories/FIFOs named *.md are rejected when parsed
            else:
                alerts.append(
                    Alert(
                        code="ingest.ignored_file",
                        severity="info",
                        stage="ingest",
                        message=f"{docs_dir / entry.name}: ignored (only docs/*.md files are documents)",
                        subject=f"docs/{entry.name}",
                    )
                )
    names.sort()
    return names


def _future_date_alerts(con: duckdb.DuckDBPyConnection, corpus_dir: Path, now: datetime) -> list[Alert]:
    """Valid documents dated after tomorrow (UTC; one day of slack for time zones): loaded, but a typo
    such as 2062 for 2026 would make them the most recent source, so each run says so."""
    today = now.date()
    rows = con.execute(_sql("future_documents.sql"), {"today": today + timedelta(days=1)}).fetchall()
    return [
        Alert(
            code="ingest.future_date",
            severity="warning",
            stage="ingest",
            message=(
                f"{corpus_dir / path}: field 'date': {date.isoformat()} is after today ({today.isoformat()}, UTC); "
                "expected the document's publication date (document loaded: check for a typo)"
            ),
            subject=path,
        )
        for _doc_id, path, date in rows
    ]


def _unknown_fields_alert(path: Path | str, rel: str, fields: Sequence[str]) -> Alert:
    names = ", ".join(repr(f) for f in fields)
    known = ", ".join(sorted(KNOWN_FIELDS))
    return Alert(
        code="ingest.unknown_field",
        severity="warning",
        stage="ingest",
        message=f"{path}: unknown front-matter field(s) {names} ignored (document loaded); expected only {known}",
        subject=rel,
    )


def _columns(schema: pa.Schema) -> dict[str, list[Any]]:
    return {name: [] for name in schema.names}


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

        # Shortcut: same path, size and mtime as stored for this corpus -> unchanged, not re-read.
        if self.stat_shortcut and st is not None:
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
                return

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
            self.alerts.append(
                Alert(code=code, severity="error", stage="ingest", message=str(exc), subject=rel)
            )
            self.record(rel, None, "skipped", code, str(exc))
            return

        assert st is not None  # read_file succeeded
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
            self.con.execute(_sql("delete_documents.sql"), {"ids": self.replaced})
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
                self.con.execute(_sql("touch_documents.sql"))
            finally:
                self.con.unregister("touch_batch")
        self.rows, self.touch, self.replaced = [], _columns(_TOUCH_SCHEMA), []

    def mark_removed(self) -> None:
        removed = sorted(i for i, prev in self.stored.items() if prev.valid and i not in self.claimed)
        if removed:
            self.con.execute(_sql("mark_removed.sql"), {"ids": removed, "now": self.now})
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
    started, clock = _utcnow(), time.perf_counter()
    corpus_dir, db_path = Path(corpus_dir), Path(db_path)
    alerts: list[Alert] = []

    # Corpus-level checks first: a missing request or docs folder is never a per-document skip.
    _, request_unknown = parse_request(request_path(corpus_dir))
    if request_unknown:
        alerts.append(
            Alert(
                code="ingest.unknown_field",
                severity="warning",
                stage="ingest",
                message=(
                    f"{corpus_dir / 'request.md'}: unknown front-matter field(s) {request_unknown} ignored; "
                    "expected only title, terms, mandatory_mentions"
                ),
                subject="request.md",
            )
        )
    docs_dir = corpus_dir / "docs"
    names = _list_document_files(docs_dir, alerts)
    if not names:
        raise CorpusError(docs_dir, None, "at least one document file docs/*.md", "no document found")
    reference = _check_reference(corpus_dir, strict, alerts)

    db_path.parent.mkdir(parents=True, exist_ok=True)
    with _read_write(db_path) as con:
        last = con.execute(_sql("last_ingest_corpus.sql")).fetchone()
        corpus_key = str(corpus_dir.resolve())
        run = _Ingestion(
            con,
            corpus_dir,
            run_id=uuid.uuid4().hex,
            now=_utcnow(),
            max_doc_bytes=max_doc_bytes,
            stat_shortcut=trust_file_stat and last is not None and last[0] == corpus_key,
        )
        con.execute("BEGIN TRANSACTION")
        try:
            for start in range(0, len(names), batch_size):
                for name in names[start : start + batch_size]:
                    run.process(name)
                run.flush()
            if run.errors and strict:
                raise StrictModeError(run.errors)
            if not run.claimed:
                raise CorpusError(
                    docs_dir,
                    None,
                    "at least one valid document",
                    f"none of the {len(names)} document file(s) is valid (first error: {run.errors[0]})",
                )
            run.mark_removed()
            alerts.extend(_future_date_alerts(con, corpus_dir, run.now))
            if reference is not None:
                alerts.extend(_reference_alerts(corpus_dir, reference, run.claimed))
            run.write_log()
            row = con.execute(_sql("count_valid_documents.sql")).fetchone()
            documents = int(row[0]) if row else 0
            con.execute(
                _sql("insert_ingest_run.sql"),
                {
                    "run_id": run.run_id,
                    "corpus_dir": corpus_key,
                    "strict": strict,
                    "started_at": started,
                    "finished_at": _utcnow(),
                    **run.counts,
                    "documents": documents,
                },
            )
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


@contextmanager
def _read_write(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    try:
        # One writing process per file, and no reader meanwhile: wait for the other run (veille.dblock).
        retry_on_lock(lambda: con.execute(_sql("attach_database.sql"), {"path": str(db_path)}), db_path)
        con.execute("USE corpus")
        migrate(con)
        yield con
    finally:
        con.close()


def _reference_alerts(corpus_dir: Path, reference: Reference, valid_ids: Collection[str]) -> list[Alert]:
    missing = unknown_reference_ids(reference, valid_ids)
    if not missing:
        return []
    return [
        Alert(
            code="ingest.reference_unknown_ids",
            severity="warning",
            stage="ingest",
            message=(
                f"{corpus_dir / 'reference' / 'facts.yaml'}: names document(s) {', '.join(missing)} "
                "that are not valid documents of the corpus; expected ids from docs/*.md"
            ),
            subject="reference/facts.yaml",
        )
    ]


def _load_state(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, _Stored], dict[str, str]]:
    stored: dict[str, _Stored] = {}
    by_path: dict[str, str] = {}
    cursor = con.execute(_sql("corpus_state.sql"))
    while rows := cursor.fetchmany(10_000):
        for doc_id, path, content_hash, size, mtime_ns, unknown, status, ingested_at in rows:
            valid = status == "valid"
            stored[doc_id] = _Stored(path, content_hash, size, mtime_ns, unknown or [], valid, ingested_at)
            if valid:
                by_path[path] = doc_id
    return stored, by_path


def _check_reference(corpus_dir: Path, strict: bool, alerts: list[Alert]) -> Reference | None:
    try:
        return load_reference(corpus_dir)
    except CorpusError as exc:
        if strict:
            raise
        alerts.append(
            Alert(
                code="ingest.invalid_reference",
                severity="error",
                stage="ingest",
                message=str(exc),
                subject=exc.path.name,
            )
        )
        return None


# ------------------------------------------------------------------------------------------ reading
def read_catalogue(db_path: Path, *, with_summaries: bool = False) -> Catalogue:
    """The catalogue: one line per valid document, ordered by id (``id | date | source_type | title``,
    plus `` — summary`` when ``with_summaries`` and the document has one)."""
    with _read_only(db_path) as con:
        rows = con.execute(_sql("catalogue.sql")).fetchall()
    entries: list[CatalogueEntry] = []
    lines: list[str] = []
    for doc_id, date, source_type, title, summary, line in rows:
        entries.append(
            CatalogueEntry(id=doc_id, date=date, source_type=source_type, title=title, summary=summary)
        )
        lines.append(f"{line} — {summary}" if with_summaries and summary else line)
    text = "\n".join(lines)
    return Catalogue(
        entries=entries, text=text, token_estimate=estimate_tokens(text), with_summaries=with_summaries
    )


def fetch_documents(db_path: Path, ids: Sequence[str]) -> list[DocumentText]:
    """Full text of the given documents, in the order asked (duplicates collapsed). Unknown or removed
    ids raise KeyError naming them. Opens its own read-only connection: safe to call from threads."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return []
    with _read_only(db_path) as con:
        rows = con.execute(_sql("fetch_documents.sql"), {"ids": wanted}).fetchall()
    found = {
        row[0]: DocumentText(id=row[0], date=row[1], source_type=row[2], title=row[3], body=row[4])
        for row in rows
    }
    missing = [i for i in wanted if i not in found]
    if missing:
        raise KeyError(f"unknown or removed document id(s): {', '.join(missing)}")
    return [found[i] for i in wanted]


def document_snapshot(db_path: Path) -> list[tuple[str, str]]:
    """(id, content_hash) of every valid, non-removed document, ordered by id."""
    with _read_only(db_path) as con:
        return [(str(a), str(b)) for a, b in con.execute(_sql("document_snapshot.sql")).fetchall()]
