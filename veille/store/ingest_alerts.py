"""Alerts an ingestion raises about the corpus as a whole (not one per document): future dates, the
reference naming unknown ids, front-matter fields veille does not use, documents dated by their file.

Per-document remarks that repeat across a corpus (extra fields of Jekyll or Hugo, dates taken from the
file) are aggregated into ONE alert each, naming the count and the first few files, so a 20,000-document
corpus gives a handful of lines, not thousands.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import duckdb

from veille.alerts import Alert, alert
from veille.corpus.document import DocumentFields
from veille.corpus.reference import Reference, unknown_reference_ids
from veille.secrets import scrub_text
from veille.store.queries import read_sql

__all__ = ["Aggregates", "future_date_alerts", "reference_alerts", "scrubbed_document"]

_EXAMPLES = 3


class Aggregates:
    """Counts of repeated per-document facts, turned into one alert each by :meth:`alerts`."""

    def __init__(self) -> None:
        self.fields: Counter[str] = Counter()
        self.with_fields: list[str] = []
        self.with_fields_count = 0
        self.file_dated: list[str] = []
        self.file_dated_count = 0

    def unknown(self, rel: str, fields: Sequence[str]) -> None:
        if fields:
            self.fields.update(fields)
            self.with_fields_count += 1
            if len(self.with_fields) < _EXAMPLES:
                self.with_fields.append(rel)

    def file_date(self, rel: str) -> None:
        self.file_dated_count += 1
        if len(self.file_dated) < _EXAMPLES:
            self.file_dated.append(rel)

    def alerts(self) -> list[Alert]:
        out: list[Alert] = []
        if self.fields:
            names = ", ".join(f"{name} ({n})" for name, n in self.fields.most_common(12))
            more = f" and {len(self.fields) - 12} more" if len(self.fields) > 12 else ""
            out.append(
                alert(
                    "ingest",
                    "ingest.unknown_fields",
                    f"{self.with_fields_count} document(s) carry front-matter fields veille does not use, "
                    f"ignored (documents loaded): {names}{more}; e.g. {', '.join(self.with_fields)}",
                    severity="info",
                    subject=self.with_fields[0],
                )
            )
        if self.file_dated_count:
            out.append(
                alert(
                    "ingest",
                    "ingest.file_date",
                    f"{self.file_dated_count} document(s) have no date of their own and are dated by their "
                    f"file's modification time (« date du fichier » in the catalogue); e.g. "
                    f"{', '.join(self.file_dated)}; add a date to their front matter if it matters",
                    severity="info",
                    subject=self.file_dated[0],
                )
            )
        return out


def future_date_alerts(con: duckdb.DuckDBPyConnection, corpus_dir: Path, now: datetime) -> list[Alert]:
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


def reference_alerts(corpus_dir: Path, reference: Reference, valid_ids: Collection[str]) -> list[Alert]:
    missing = unknown_reference_ids(reference, valid_ids)
    if not missing:
        return []
    return [
        alert(
            "ingest",
            "ingest.reference_unknown_ids",
            f"{corpus_dir / 'reference' / 'facts.yaml'}: names document(s) {', '.join(missing)} "
            "that are not valid documents of the corpus; expected ids of documents under docs/",
            severity="warning",
            subject="reference/facts.yaml",
        )
    ]


def scrubbed_document(doc: DocumentFields, rel: str) -> tuple[DocumentFields, list[Alert]]:
    """``doc`` with every configured secret masked in its text fields (a key pasted in a note, a URL
    with its password) — the database, the prompts and every output read them from there — and the
    warning naming the file when something was masked."""
    fields = {f: getattr(doc, f) for f in ("title", "summary", "url", "author", "body")}
    changed = {f: scrub_text(v) for f, v in fields.items() if v and scrub_text(v) != v}
    if not changed:
        return doc, []
    message = f"{rel} : secret configuré (clé d'API, mot de passe d'une URL) masqué dans {sorted(changed)}"
    return doc._replace(**changed), [  # type: ignore[arg-type]  # text fields only
        alert("ingest", "ingest.secret_masked", message, severity="warning", subject=rel)
    ]
