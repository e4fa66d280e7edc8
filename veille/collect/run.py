"""One night of collecting: every source of ``<corpus>/sources.toml`` fetched, parsed and written as
documents. A failing source is one alert naming it; the others go on. The night, each source and
each fetch have a total deadline (``[limits]``), so a night ends before a collect waiting for the
lock gives up."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

import httpx

from veille.alerts import Alert, Severity, alert, grouped_alert
from veille.collect.deadline import deadline
from veille.collect.feeds import FeedError
from veille.collect.fetch import Fetcher, FetchError, HttpCache, Resolver, resolve_host
from veille.collect.items import Item
from veille.collect.pages import PageError
from veille.collect.source import SourceNight, source_items
from veille.collect.sources import (
    NIGHT_DEADLINE_MAX_S,
    SOURCES_FILE,
    Source,
    SourcesConfig,
    SourcesError,
    load_sources,
    sources_file,
)
from veille.collect.write import DocIndex, Outcome, document_id, write_item

__all__ = [
    "COLLECT_WAIT_S",
    "LOCK_FILE",
    "STATE_FILE",
    "CollectBusyError",
    "CollectReport",
    "collect_corpus",
    "collect_night",
    "sources_file",
]

STATE_FILE = ".collect-state.json"  # hidden: ingestion never reads it
LOCK_FILE = ".collect.lock"
# Longest wait for another collect of the same corpus (a night's collect step and a `veille collect`
# by hand): longer than the longest night (night_deadline_s), so the wait ends with the lock.
COLLECT_WAIT_S = NIGHT_DEADLINE_MAX_S + 60.0


@dataclass
class CollectReport:
    """What a night of collecting did: counts per outcome, the ids written, one alert per failure."""

    sources: int = 0
    failed_sources: int = 0
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("added", "updated", "unchanged", "duplicate"), 0)
    )
    written: list[str] = field(default_factory=list)  # ids added or updated this night
    alerts: list[Alert] = field(default_factory=list)
    bytes_read: int = 0

    def note(self) -> str:
        c = self.counts
        return (
            f"{self.sources} source(s), {self.failed_sources} failed; {c['added']} added, {c['updated']} "
            f"updated, {c['unchanged']} unchanged, {c['duplicate']} duplicate(s); {self.bytes_read} bytes"
        )


def _wanted(source: Source, item: Item) -> bool:
    if not source.keywords:
        return True
    text = f"{item.title}\n{item.summary}\n{item.body}".casefold()
    return any(k.casefold() in text for k in source.keywords)


def _page_kept(corpus_dir: Path, index: DocIndex, item: Item, pages_not_modified: set[str]) -> bool:
    """A followed page that answered 304 and whose document collect wrote: left as it is. (The item
    holds the feed's text only; written, it would replace the page's text it already has.)"""
    if item.url is None or item.url not in pages_not_modified:
        return False
    doc_id = document_id(item.key)
    return doc_id in index.docs and (corpus_dir / "docs" / f"{doc_id}.md").exists()


def _item_alerts(source: Source, night: SourceNight, empty: list[str], repeated: list[str]) -> list[Alert]:
    """One alert per kind of item problem of a source (each naming the first few items)."""
    name = f"source {source.name!r}"
    out = []
    if night.problems:
        out.append(
            _alert(
                source,
                f"{len(night.problems)} item page(s) not fetched, feed text kept: {night.problems[0]}",
                "info",
            )
        )
    if night.guid_only:
        head = f"{name} : entrées sans lien http(s), identifiées par leur id/guid et écrites sans url"
        out.append(
            grouped_alert(
                "collect.no_link", stage="collect", head=head, subjects=night.guid_only, severity="info"
            )
        )
    if night.unusable:
        problem = f"{night.unusable} entry(ies) with no link, no id and no text: not collected"
        out.append(
            alert("collect", "collect.no_link", f"{name} ({source.url}): {problem}", subject=source.name)
        )
    if empty:
        head = f"{name} : éléments sans texte au-delà du titre (follow_links = true lit la page de chaque élément)"
        out.append(grouped_alert("collect.empty_body", stage="collect", head=head, subjects=empty))
    if repeated:
        head = f"{name} : éléments à une adresse déjà collectée cette nuit, le premier seul est gardé"
        out.append(
            grouped_alert("collect.same_url", stage="collect", head=head, subjects=repeated, severity="info")
        )
    return out


def _alert(source: Source, problem: str, severity: Severity = "warning") -> Alert:
    return alert(
        "collect",
        "collect.source_failed",
        f"source {source.name!r} ({source.url}): {problem}; the night goes on without it",
        severity=severity,
        subject=source.name,
    )


class CollectBusyError(RuntimeError):
    """Another collect of the same corpus held its lock for longer than the wait allows."""


@contextlib.contextmanager
def _only_collect(corpus_dir: Path, wait_s: float) -> Iterator[None]:
    """One collect at a time per corpus: two would both read the state file, write documents and
    save the state, the last save dropping the other's HTTP cache and document index."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock (the state stays consistent, a save may be lost)
        yield
        return
    path = corpus_dir / LOCK_FILE
    with path.open("a", encoding="utf-8") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise CollectBusyError(
                        f"{path}: another collect of this corpus is still running after {wait_s:.0f} s "
                        "(a nightly run's collect step or `veille collect`); expected it to finish first"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _load_state(path: Path) -> tuple[HttpCache, DocIndex]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return HttpCache(), DocIndex()  # lost or corrupt: the next night refetches everything once
    return HttpCache(dict(raw.get("http", {}))), DocIndex(dict(raw.get("docs", {})))


def _save_state(path: Path, cache: HttpCache, index: DocIndex) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(
        json.dumps({"http": cache.entries, "docs": index.docs}, indent=1, sort_keys=True), encoding="utf-8"
    )
    os.replace(tmp, path)


def collect_corpus(
    corpus_dir: Path,
    *,
    max_doc_bytes: int = 1_048_576,
    today: date | None = None,
    resolver: Resolver = resolve_host,
    transport: httpx.BaseTransport | None = None,
    on_item: Callable[[str, Outcome], None] | None = None,
    lock_wait_s: float = COLLECT_WAIT_S,
) -> CollectReport:
    """Collect every source of ``corpus_dir/sources.toml`` into ``corpus_dir/docs``. An invalid
    sources file raises :class:`~veille.collect.sources.SourcesError`; a failing source is an alert;
    another collect of the corpus still running after ``lock_wait_s`` raises :class:`CollectBusyError`."""
    config = load_sources(sources_file(corpus_dir))
    with _only_collect(corpus_dir, lock_wait_s):
        return _collect(corpus_dir, config, max_doc_bytes, today, resolver, transport, on_item)


def _collect(
    corpus_dir: Path,
    config: SourcesConfig,
    max_doc_bytes: int,
    today: date | None,
    resolver: Resolver,
    transport: httpx.BaseTransport | None,
    on_item: Callable[[str, Outcome], None] | None,
) -> CollectReport:
    state_path = corpus_dir / STATE_FILE
    cache, index = _load_state(state_path)
    fetcher = Fetcher(config.limits, cache, resolver=resolver, transport=transport)
    report, day = CollectReport(sources=len(config.source)), today or datetime.now(UTC).date()
    seen: set[str] = set()  # item keys handled this night: the first source/entry with a URL wins
    try:
        with deadline(time.monotonic() + config.limits.night_deadline_s):
            for source in config.source:
                with deadline(time.monotonic() + config.limits.source_deadline_s):
                    night = _fetch_source(fetcher, source, report)
                if night is not None:
                    _write_source(corpus_dir, index, source, night, day, max_doc_bytes, seen, report, on_item)
    finally:
        report.bytes_read = fetcher.night_bytes
        fetcher.close()
        _save_state(state_path, cache, index)
    return report


def _fetch_source(fetcher: Fetcher, source: Source, report: CollectReport) -> SourceNight | None:
    """The source's night, or None after one alert naming it."""
    severity: Severity = "warning"
    try:
        return source_items(fetcher, source)
    except (FetchError, FeedError, PageError) as exc:
        problem = str(exc)
    except Exception as exc:
        problem, severity = f"unexpected {type(exc).__name__}: {exc}", "error"
    report.failed_sources += 1
    report.alerts.append(_alert(source, problem, severity))
    return None


def _write_source(
    corpus_dir: Path,
    index: DocIndex,
    source: Source,
    night: SourceNight,
    day: date,
    max_doc_bytes: int,
    seen: set[str],
    report: CollectReport,
    on_item: Callable[[str, Outcome], None] | None,
) -> None:
    empty: list[str] = []
    repeated: list[str] = []
    for item in [it for it in night.items if _wanted(source, it)]:
        outcome: Outcome
        if item.key in seen:  # two entries with one URL would rewrite each other every night
            doc_id, outcome = document_id(item.key), "duplicate"
            repeated.append(item.key)
        elif _page_kept(corpus_dir, index, item, night.pages_not_modified):
            doc_id, outcome = document_id(item.key), "unchanged"
        else:
            doc_id, outcome = write_item(
                corpus_dir / "docs", index, item, source.source_type, day, max_doc_bytes
            )
            if not item.body.strip():
                empty.append(doc_id)
        seen.add(item.key)
        report.counts[outcome] += 1
        if outcome in ("added", "updated"):
            report.written.append(doc_id)
        if on_item is not None:
            on_item(doc_id, outcome)
    report.alerts.extend(_item_alerts(source, night, empty, repeated))


def collect_night(
    corpus_dir: Path, *, max_doc_bytes: int = 1_048_576, lock_wait_s: float = COLLECT_WAIT_S
) -> CollectReport:
    """The nightly step: :func:`collect_corpus`, with an invalid ``sources.toml`` as one error alert
    (the night goes on with the corpus as it is)."""
    try:
        return collect_corpus(corpus_dir, max_doc_bytes=max_doc_bytes, lock_wait_s=lock_wait_s)
    except SourcesError as exc:
        invalid = alert(
            "collect", "collect.invalid_sources", str(exc), severity="error", subject=SOURCES_FILE
        )
        return CollectReport(alerts=[invalid])
    except CollectBusyError as exc:
        busy = alert("collect", "collect.busy", str(exc), severity="error", subject=LOCK_FILE)
        return CollectReport(alerts=[busy])
