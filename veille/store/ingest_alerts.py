"""Alerts an ingestion raises about the corpus as a whole (not one per document): future dates, the
reference naming unknown ids, front-matter fields veille does not use, dates not given by the author
(read in the text, unknown, or the file clock when the user opted in), bodies carrying characters that
hide text (tag characters, bidi controls, C1 controls: named at the ingestion that reads the file).

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
from veille.corpus.invisible import hidden_characters
from veille.corpus.reference import Reference, unknown_reference_ids
from veille.secrets import scrub_text
from veille.store.queries import read_sql

__all__ = ["Aggregates", "future_date_alerts", "reference_alerts", "scrubbed_document"]

_EXAMPLES = 3
# Dates the author did not give: one info alert each, saying where they came from (French).
_DATE_ALERTS = {
    "text": (
        "ingest.text_date",
        "datés par la première date de publication lue dans leur texte (« date lue dans le texte » "
        "dans les sources)",
    ),
    "unknown": (
        "ingest.unknown_date",
        "sans date propre (ni front matter, ni propriétés du fichier qui soient les siennes, ni date de "
        "publication dans le texte) : « date inconnue », jamais départagés par la date dans les "
        "contradictions ; ajoutez « date: » à leur front matter, ou VEILLE_DATE_FROM_FILE_CLOCK=true pour "
        "les dater par l'horloge du fichier",
    ),
    "file_clock": (
        "ingest.file_date",
        "datés par l'horloge de leur fichier (VEILLE_DATE_FROM_FILE_CLOCK=true ; « date du fichier » dans "
        "le catalogue) : une copie ou un clone récent leur donne le jour de la copie ; ajoutez « date: » à "
        "leur front matter si elle compte",
    ),
}


class Aggregates:
    """Counts of repeated per-document facts, turned into one alert each by :meth:`alerts`."""

    def __init__(self) -> None:
        self.fields: Counter[str] = Counter()
        self.with_fields: list[str] = []
        self.with_fields_count = 0
        # date origin -> (count, first files): dates the author did not give say where they came from
        self.dated: dict[str, tuple[int, list[str]]] = {}
        # bodies carrying characters that hide text (veille.corpus.invisible): kinds, count, first files
        self.hidden_kinds: Counter[str] = Counter()
        self.hidden_files: list[str] = []
        self.hidden_count = 0

    def unknown(self, rel: str, fields: Sequence[str]) -> None:
        if fields:
            self.fields.update(fields)
            self.with_fields_count += 1
            if len(self.with_fields) < _EXAMPLES:
                self.with_fields.append(rel)

    def date_origin(self, rel: str, origin: str | None) -> None:
        """A document's date origin; those in :data:`_DATE_ALERTS` are named in one alert each."""
        if origin in _DATE_ALERTS:
            count, examples = self.dated.get(origin, (0, []))
            self.dated[origin] = (count + 1, examples if len(examples) >= _EXAMPLES else [*examples, rel])

    def hidden(self, rel: str, body: str) -> None:
        """A body read by this ingestion: named when it carries characters that hide text."""
        found = hidden_characters(body)
        if found:
            self.hidden_kinds.update(found)
            self.hidden_count += 1
            if len(self.hidden_files) < _EXAMPLES:
                self.hidden_files.append(rel)

    def alerts(self) -> list[Alert]:
        out: list[Alert] = []
        if self.hidden_count:
            kinds = ", ".join(f"{label} ({n})" for label, n in self.hidden_kinds.most_common())
            out.append(
                alert(
                    "ingest",
                    "ingest.hidden_characters",
                    f"{self.hidden_count} document(s) portent dans leur texte des caractères invisibles, "
                    f"où une instruction peut se cacher de qui relit le document : {kinds} ; documents "
                    f"chargés, à vérifier ; p. ex. {', '.join(self.hidden_files)}",
                    severity="warning",
                    subject=self.hidden_files[0],
                )
            )
        if self.fields:
            names = ", ".join(f"{name} ({n})" for name, n in self.fields.most_common(12))
            more = f" et {len(self.fields) - 12} autre(s)" if len(self.fields) > 12 else ""
            out.append(
                alert(
                    "ingest",
                    "ingest.unknown_fields",
                    f"{self.with_fields_count} document(s) portent des champs de front matter que veille "
                    f"n'utilise pas, ignorés (documents chargés) : {names}{more} ; p. ex. "
                    f"{', '.join(self.with_fields)}",
                    severity="info",
                    subject=self.with_fields[0],
                )
            )
        for origin, (code, text) in _DATE_ALERTS.items():
            if origin in self.dated:
                count, examples = self.dated[origin]
                message = f"{count} document(s) {text} ; p. ex. {', '.join(examples)}"
                out.append(alert("ingest", code, message, severity="info", subject=examples[0]))
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
            f"{corpus_dir / path} : champ « date » : {date.isoformat()} est après aujourd'hui "
            f"({today.isoformat()}, UTC) ; attendu : la date de publication du document (document chargé : "
            "vérifiez une faute de frappe)",
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
            f"{corpus_dir / 'reference' / 'facts.yaml'}: nomme des documents ({', '.join(missing)}) "
            "qui ne sont pas des documents valides du corpus ; attendu : des identifiants de documents de docs/",
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
