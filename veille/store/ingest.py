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

import contextlib
import hashlib
import os
import time
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from veille import progress
from veille.alerts import Alert, alert
from veille.arrowrows import column, table_from_columns
from veille.checkpoints import checkpoint
from veille.corpus.convert import ConversionError, detect_format
from veille.corpus.document import (
    DEFAULT_MAX_DOC_BYTES,
    DocumentFields,
    derive_fields,
    parse_document_fields,
)
from veille.corpus.errors import CorpusError, DuplicateIdError, StrictModeError
from veille.corpus.frontmatter import read_file
from veille.corpus.layout import DocumentsPlace
from veille.oserrors import environment_error
from veille.store.connection import read_write, set_aside_unreadable
from veille.store.conversions import ConversionCache
from veille.store.files import check_corpus
from veille.store.ingest_alerts import Aggregates, future_date_alerts, reference_alerts, scrubbed_document
from veille.store.queries import read_sql, utcnow
from veille.store.rows import (
    _DOC_SCHEMA,
    _LOG_SCHEMA,
    _TOUCH_SCHEMA,
    IngestReport,
    _columns,
    _document_row,
    _load_state,
    _record_run,
    _redated,
    _Stored,
)
from veille.store.section_rows import SectionRows

__all__ = ["DEFAULT_BATCH_SIZE", "IngestReport", "ingest_corpus"]

DEFAULT_BATCH_SIZE = 500  # files parsed, then written, per batch: bounds the bodies held in memory


class _Ingestion:
    """One ingestion run over an open connection, inside the caller's transaction."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        place: DocumentsPlace,
        *,
        run_id: str,
        now: datetime,
        max_doc_bytes: int,
        stat_shortcut: bool,
        file_clock: bool = False,
    ) -> None:
        self.con = con
        self.file_clock = file_clock  # the user's opt-in: an undated document takes its file's day
        self.corpus_dir = place.corpus
        self.docs_dir = str(place.folder)  # str paths: pathlib costs ~2 s per 100k files
        self.prefix = place.prefix  # "docs/", or "" for documents at the folder's root
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
        self.sections = SectionRows()
        self.conversions = ConversionCache(con, now)
        self.aggregates = Aggregates()

    def record(
        self, rel: str | None, doc_id: str | None, event: str, code: str | None, msg: str | None
    ) -> None:
        for key, value in zip(
            _LOG_SCHEMA.names, (self.run_id, self.now, rel, doc_id, event, code, msg), strict=True
        ):
            self.log[key].append(value)

    def process(self, name: str) -> None:
        path, rel = os.path.join(self.docs_dir, name), self.prefix + name
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
        docs = Path(self.docs_dir)
        for exc in errors:
            try:
                rel = self.prefix + exc.path.relative_to(docs).as_posix()
            except ValueError:
                rel = self.prefix + exc.path.name
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
            and prev.date_origin != ("unknown" if self.file_clock else "file_clock")  # setting changed
        ):
            self.claimed[known_id] = rel
            self.counts["unchanged"] += 1
            self.aggregates.unknown(rel, prev.unknown_fields)
            self.aggregates.date_origin(rel, prev.date_origin)
            return True
        return False

    def _fields(self, path: str, rel: str, st: os.stat_result | None) -> DocumentFields:
        """Read, convert (through the cache for non-text formats) and validate one file."""
        raw = read_file(path, max_bytes=self.max_doc_bytes, st=st)
        mtime = st.st_mtime if st is not None else None
        if detect_format(rel) in ("markdown", "text"):
            return parse_document_fields(raw, path, rel=rel, mtime=mtime, file_clock=self.file_clock)
        content_hash = hashlib.sha256(raw).hexdigest()
        try:
            converted = self.conversions.convert(raw, name=path, content_hash=content_hash)
        except ConversionError as exc:
            raise CorpusError(path, None, exc.expected, exc.problem) from None
        return derive_fields(
            converted, path=path, rel=rel, content_hash=content_hash, mtime=mtime, file_clock=self.file_clock
        )

    def _unique_id(self, doc: DocumentFields, path: str, rel: str) -> DocumentFields:
        """A derived id already taken (``a.md`` and ``a.pdf``) gets the format, then a number; a
        front-matter id already taken is an error naming both files."""
        if doc.id not in self.claimed:
            return doc
        if doc.origins.get("id") == "path":
            for candidate in (f"{doc.id}-{doc.format}", *(f"{doc.id}-{k}" for k in range(2, 1000))):
                if candidate not in self.claimed:
                    return doc._replace(id=candidate)
        other = self.claimed[doc.id]
        raise DuplicateIdError(
            path,
            "id",
            f"un identifiant propre à un seul fichier (renommez-le dans {other} ou {rel})",
            f"identifiant en double {doc.id!r} : {self.corpus_dir / other} l'utilise déjà",
        )

    def _parse(self, path: str, rel: str, st: os.stat_result | None) -> DocumentFields | None:
        """The validated document, or None after recording why the file is skipped."""
        try:
            try:
                return self._unique_id(self._fields(path, rel, st), path, rel)
            except RecursionError:  # a structure too deep for a library: this file's problem only
                raise CorpusError(
                    path, None, "un document de structure raisonnable", "imbrication trop profonde"
                ) from None
        except CorpusError as exc:
            self.errors.append(exc.with_traceback(None))  # frames would keep the connection alive
            self.counts["skipped"] += 1
            code = "ingest.duplicate_id" if isinstance(exc, DuplicateIdError) else "ingest.invalid_document"
            self.alerts.append(alert("ingest", code, str(exc), severity="error", subject=rel))
            self.record(rel, None, "skipped", code, str(exc))
            return None

    def _classify(self, doc: DocumentFields, path: str, rel: str, st: os.stat_result) -> None:
        """Added, updated or unchanged against the stored state; buffers the rows to write."""
        self.claimed[doc.id] = rel
        self.aggregates.unknown(rel, doc.unknown_fields)
        self.aggregates.date_origin(rel, doc.origins["date"])
        self.aggregates.hidden(rel, doc.body)  # named at the ingestion that reads the file
        for note in doc.notes:
            message = f"{path} : {note} (document chargé)"
            self.alerts.append(alert("ingest", "ingest.document_note", message, severity="info", subject=rel))
            self.record(rel, doc.id, "warning", "ingest.document_note", message)
        prev = self.stored.get(doc.id)
        if prev is None or not prev.valid:
            self.counts["added"] += 1
            self.record(rel, doc.id, "added", None, None)
            self._add_row(doc, rel, st, prev)
        elif prev.content_hash != doc.content_hash or _redated(prev.date_origin, doc.origins["date"]):
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
        doc, masked = scrubbed_document(doc, rel)  # a configured secret never reaches the database
        self.alerts += masked
        first = prev.ingested_at if prev is not None else self.now  # first ingestion date survives updates
        self.rows.append(_document_row(doc, rel, st.st_size, st.st_mtime_ns, first, self.now))
        self.sections.add(doc.id, doc.content_hash, doc.body)

    def flush(self) -> None:
        """Write the buffered batch (called every ``batch_size`` files and at the end)."""
        if self.replaced:
            self.con.execute(read_sql("delete_documents.sql"), {"ids": self.replaced})
        if self.rows:
            columns = list(zip(*self.rows, strict=True))
            table = pa.Table.from_arrays(
                [column(col, f.type) for col, f in zip(columns, _DOC_SCHEMA, strict=True)],
                schema=_DOC_SCHEMA,
            )
            # Relation.insert_into keeps memory flat across batches; a registered view did not (bench).
            self.con.from_arrow(table).insert_into("documents")
        if self.touch["id"]:
            self.con.register("touch_batch", table_from_columns(self.touch, _TOUCH_SCHEMA))
            try:
                self.con.execute(read_sql("touch_documents.sql"))
            finally:
                self.con.unregister("touch_batch")
        self.sections.flush(self.con, self.replaced)
        self.conversions.flush()
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
            self.con.from_arrow(table_from_columns(self.log, _LOG_SCHEMA)).insert_into("ingest_log")


def ingest_corpus(
    corpus_dir: Path,
    db_path: Path,
    *,
    strict: bool = False,
    max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES,
    batch_size: int = DEFAULT_BATCH_SIZE,
    trust_file_stat: bool = True,
    file_clock: bool = False,
    request: str | None = None,
) -> IngestReport:
    """Load the corpus's documents (``docs/`` or its root) into the DuckDB file ``db_path`` (created if
    missing); ``request``: the one given (a file or its text), else the folder's. Invalid documents are
    skipped with an ``ingest.invalid_document`` (or ``ingest.duplicate_id``) alert; with ``strict=True``
    every file is still checked, then :class:`StrictModeError` is raised for the first invalid one (its
    message counts the others) and nothing is written. Raises CorpusError (and writes nothing) when the
    corpus folder, the request or the documents are missing or invalid, or when no document is valid. ``file_clock``: a document with no date of its own takes its file's day.
    """
    try:
        args = (strict, max_doc_bytes, batch_size, trust_file_stat, file_clock, request)
        return _ingest_corpus(corpus_dir, db_path, *args)
    except (CorpusError, duckdb.Error) as exc:  # bad input or the machine's (disk full): not a bug, so
        if isinstance(exc, CorpusError) or environment_error(exc) is not None:  # drop the frames that keep
            raise exc.with_traceback(None) from None  # the connection alive in Prefect's failed state
        raise  # a bug keeps its traceback


def _ingest_corpus(
    corpus_dir: Path,
    db_path: Path,
    strict: bool,
    max_doc_bytes: int,
    batch_size: int,
    trust_file_stat: bool,
    file_clock: bool,
    request: str | None,
) -> IngestReport:
    started, clock = utcnow(), time.perf_counter()
    corpus_dir, db_path = Path(corpus_dir), Path(db_path)
    alerts: list[Alert] = []
    refused: list[CorpusError] = []  # links leaving the corpus: invalid files (strict mode fails on them)
    names, reference, place = check_corpus(corpus_dir, strict, alerts, refused, request, db_path.parent)

    db_path.parent.mkdir(parents=True, exist_ok=True)
    if (aside := set_aside_unreadable(db_path)) is not None:  # a cache of the corpus files: rebuilt
        alerts.append(
            alert(
                "ingest",
                "ingest.database_rebuilt",
                f"{db_path}: base DuckDB illisible ; mise de côté sous {aside.name} et reconstruite à "
                "partir des fichiers du corpus",
                severity="warning",
            )
        )
    with read_write(db_path) as con:
        last = con.execute(read_sql("last_ingest_corpus.sql")).fetchone()
        corpus_key = str(corpus_dir.resolve())
        run = _Ingestion(
            con,
            place,
            run_id=uuid.uuid4().hex,
            now=utcnow(),
            max_doc_bytes=max_doc_bytes,
            stat_shortcut=trust_file_stat and last is not None and last[0] == corpus_key,
            file_clock=file_clock,
        )
        con.execute("BEGIN TRANSACTION")
        try:
            run.refuse(refused)
            _load_documents(run, names, batch_size=batch_size, strict=strict)
            alerts.extend(future_date_alerts(con, corpus_dir, run.now))
            alerts.extend(run.aggregates.alerts())
            run.conversions.prune()
            if reference is not None:
                alerts.extend(reference_alerts(corpus_dir, reference, run.claimed))
            run.write_log()
            documents = _record_run(
                con,
                {
                    "run_id": run.run_id,
                    "corpus_dir": corpus_key,
                    "strict": strict,
                    "started_at": started,
                    **run.counts,
                },
            )
            checkpoint("ingest")  # observers (crash tests): everything written, nothing committed
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a failed COMMIT (disk full) ended it: keep the cause
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
    """Every file, batch by batch (progress per file: veille.progress), then the removed documents;
    raises when strict mode or no valid document forbids the commit."""
    for start in range(0, len(names), batch_size):
        for name in progress.counting("ingest", names[start : start + batch_size], start, len(names)):
            run.process(name)
        run.flush()
    if run.errors and strict:
        raise StrictModeError(sorted(run.errors, key=lambda e: str(e.path)))
    if not run.claimed:
        problem = (
            f"aucun des {len(names)} fichier(s) de document n'est valide (première erreur : {run.errors[0]})"
        )
        raise CorpusError(Path(run.docs_dir), None, "au moins un document valide", problem)
    run.mark_removed()
