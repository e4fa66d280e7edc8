"""The corpus screen with its cache: each document is scanned once per content, then judged by set lookups.

A :class:`~veille.steps.screen.Scan` depends only on the screened text and on the screen's code, so it is
kept in a small SQLite file keyed by ``sha256(code fingerprint, content hash, title, summary)``: a night
with nothing changed reads no body; a changed screen (patterns, tokenising) changes the fingerprint and
every document is scanned again. The judgement against the corpus's ids (which change when documents
come and go) is redone each time, and costs a set lookup per id-like token.

The cache is derived state: an unreadable file is moved aside and rebuilt (an alert names it).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import closing
from pathlib import Path

from veille.alerts import Alert, alert
from veille.roles.planner import CatalogueEntry
from veille.steps import screen, screen_engine, screen_patterns
from veille.steps.screen import Scan, Signal, SourcesBlock, id_shapes, injection_alert, judge

__all__ = ["CACHE_FILE", "ScreenCache", "screen_corpus", "screen_fingerprint"]

CACHE_FILE = "screen.sqlite"
_SCREEN_BATCH = 500  # documents fetched per read-only query (memory stays flat on large corpora)
_FINGERPRINT: str | None = None


def screen_fingerprint() -> str:
    """A hash of the screen's own source code: a change to a pattern or to tokenising invalidates scans."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        digest = hashlib.sha256()
        for module in (screen, screen_engine, screen_patterns):
            digest.update(Path(str(module.__file__)).read_bytes())
        _FINGERPRINT = digest.hexdigest()[:16]
    return _FINGERPRINT


def _dump(facts: Scan) -> str:
    return json.dumps(
        {
            "signals": [[s.kind, s.excerpt] for s in facts.signals],
            "tokens": {k: list(v) for k, v in facts.tokens.items()},
            "sources": [[b.excerpt, list(b.tokens), b.bibliography] for b in facts.sources],
        },
        ensure_ascii=False,
    )


def _load(text: str) -> Scan:
    data = json.loads(text)
    return Scan(
        signals=tuple(Signal(kind, excerpt) for kind, excerpt in data["signals"]),
        tokens={str(k): tuple(map(str, v)) for k, v in data["tokens"].items()},
        sources=tuple(SourcesBlock(e, tuple(t), bool(b)) for e, t, b in data["sources"]),
    )


class ScreenCache:
    """Scans by key in one SQLite file (one connection per instance, used by one thread)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.alerts: list[Alert] = []
        self._con: sqlite3.Connection | None = None
        if path is not None:
            self._con = self._open(path)

    def _open(self, path: Path) -> sqlite3.Connection | None:
        for attempt in (1, 2):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                con = sqlite3.connect(path)
                con.execute("CREATE TABLE IF NOT EXISTS scans (key TEXT PRIMARY KEY, facts TEXT NOT NULL)")
                con.execute("SELECT count(*) FROM scans").fetchone()
                return con
            except (sqlite3.DatabaseError, OSError) as exc:
                if attempt == 2 or not path.is_file():
                    self.alerts.append(self._alert(f"cache du filtrage inutilisable ({path}) : {exc}"))
                    return None
                aside = path.with_name(path.name + ".corrupt")
                path.replace(aside)
                self.alerts.append(
                    self._alert(f"cache du filtrage illisible, mis de côté ({aside}) et reconstruit")
                )
        return None

    @staticmethod
    def _alert(message: str) -> Alert:
        return alert("ingest", "screen.cache_rebuilt", message, severity="info")

    def get_many(self, keys: Sequence[str]) -> dict[str, Scan]:
        if self._con is None or not keys:
            return {}
        found: dict[str, Scan] = {}
        for start in range(0, len(keys), 900):  # SQLite's default bound on host parameters
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            for key, facts in self._con.execute(
                f"SELECT key, facts FROM scans WHERE key IN ({marks})", chunk
            ):
                try:
                    found[key] = _load(facts)
                except (ValueError, KeyError, TypeError):
                    continue  # a bad row is rescanned and overwritten
        return found

    def put_many(self, items: Iterable[tuple[str, Scan]]) -> None:
        if self._con is None:
            return
        try:
            with self._con:
                self._con.executemany(
                    "INSERT OR REPLACE INTO scans VALUES (?, ?)", ((k, _dump(v)) for k, v in items)
                )
        except (sqlite3.DatabaseError, OSError) as exc:  # a full disk costs a rescan next night, not the run
            self.alerts.append(self._alert(f"cache du filtrage non écrit ({self.path}) : {exc}"))

    def close(self) -> None:
        if self._con is not None:
            self._con.close()


def _key(fingerprint: str, content_hash: str, title: str, summary: str) -> str:
    parts = (fingerprint, content_hash, title, summary)
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def screen_corpus(
    db_path: Path, catalogue: Sequence[CatalogueEntry], cache_dir: Path | None = None
) -> list[Alert]:
    """Screen every catalogued document (title, summary and body) of the corpus database.

    The planner sees titles and summaries, the analysts the bodies, so all three are screened. Only
    documents whose content is not in the cache are read (in batches, each with its own read-only
    connection). Returns the ``injection.suspected`` alerts in catalogue order, then any cache alert.
    """
    from veille.store.readers import document_snapshot, fetch_documents  # lazy: DuckDB only here

    hashes = dict(document_snapshot(db_path))
    fingerprint = screen_fingerprint()
    keys = {e.id: _key(fingerprint, hashes.get(e.id, ""), e.title or "", e.summary or "") for e in catalogue}
    summaries = {e.id: e.summary or "" for e in catalogue}
    cache = ScreenCache(cache_dir / CACHE_FILE if cache_dir is not None else None)
    with closing(cache):
        cached = cache.get_many(list(keys.values()))
        scans = {doc_id: cached[key] for doc_id, key in keys.items() if key in cached}
        missing = [doc_id for doc_id in keys if doc_id not in scans]
        for start in range(0, len(missing), _SCREEN_BATCH):
            batch = fetch_documents(db_path, missing[start : start + _SCREEN_BATCH])
            new = {d.id: screen.scan(f"{d.title}\n{summaries[d.id]}\n{d.body}") for d in batch}
            cache.put_many((keys[doc_id], facts) for doc_id, facts in new.items())
            scans.update(new)
    shapes = id_shapes(keys)
    alerts = [
        injection_alert(doc_id, signals)
        for doc_id in keys
        if (signals := judge(scans[doc_id], own_id=doc_id, corpus_ids=shapes))
    ]
    return alerts + cache.alerts
