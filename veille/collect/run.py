"""One night of collecting: every source of ``<corpus>/sources.toml`` fetched, parsed and written as
documents. A failing source is one alert naming it; the others go on."""

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

from veille.alerts import Alert, Severity, alert
from veille.collect.feeds import FeedError, parse_feed
from veille.collect.fetch import Fetcher, FetchError, HttpCache, Resolver, resolve_host
from veille.collect.items import Item
from veille.collect.pages import PageError, extract_page
from veille.collect.sources import SOURCES_FILE, Source, SourcesConfig, SourcesError, load_sources
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
# by hand): each fetch is bounded by its timeout and the night's byte cap, so it ends.
COLLECT_WAIT_S = 600.0
_FEED_TYPES = (
    "application/rss+xml",
    "application/atom+xml",
    "application/xml",
    "text/xml",
    "application/rdf+xml",
)
_PAGE_TYPES = ("text/html", "application/xhtml+xml")


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


def sources_file(corpus_dir: Path) -> Path:
    return corpus_dir / SOURCES_FILE


def _feed_type(content_type: str) -> bool:
    return (
        content_type in _FEED_TYPES or content_type.endswith(("+xml", "/xml")) or content_type == "text/plain"
    )


def _page_type(content_type: str) -> bool:
    return content_type in _PAGE_TYPES


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _wanted(source: Source, item: Item) -> bool:
    if not source.keywords:
        return True
    text = f"{item.title}\n{item.summary}\n{item.body}".casefold()
    return any(k.casefold() in text for k in source.keywords)


def _source_items(fetcher: Fetcher, source: Source) -> tuple[list[Item], list[str], set[str]]:
    """The source's items this night (empty when not modified), the problems with single items, and
    the item URLs whose page answered 304 (``follow_links``: the document already holds its text)."""
    got = fetcher.get(
        source.url,
        allow_private=source.allow_private,
        accept=_feed_type if source.kind == "feed" else _page_type,
    )
    if got.not_modified:
        return [], [], set()
    if source.kind == "page":
        return [extract_page(_decode(got.body), source.url)], [], set()
    items = parse_feed(got.body, got.url)[: source.max_items]
    problems: list[str] = []
    pages_not_modified: set[str] = set()
    if source.follow_links:
        followed = []
        for item in items:
            try:
                page = fetcher.get(item.url, allow_private=source.allow_private, accept=_page_type)
                if page.not_modified:
                    pages_not_modified.add(item.url)
                else:
                    extracted = extract_page(_decode(page.body), item.url)
                    item = Item(
                        item.url,
                        item.title,
                        item.day or extracted.day,
                        item.summary or extracted.summary,
                        extracted.body,
                    )
            except (FetchError, PageError) as exc:  # the feed's own text stands in for the page
                problems.append(f"{item.url}: {exc}")
            followed.append(item)
        items = followed
    return items, problems, pages_not_modified


def _page_kept(corpus_dir: Path, index: DocIndex, item: Item, pages_not_modified: set[str]) -> bool:
    """A followed page that answered 304 and whose document collect wrote: left as it is. (The item
    holds the feed's text only; written, it would replace the page's text it already has.)"""
    if item.url not in pages_not_modified:
        return False
    doc_id = document_id(item.url)
    return doc_id in index.docs and (corpus_dir / "docs" / f"{doc_id}.md").exists()


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
    try:
        for source in config.source:
            try:
                items, problems, pages_not_modified = _source_items(fetcher, source)
            except (FetchError, FeedError, PageError) as exc:
                report.failed_sources += 1
                report.alerts.append(_alert(source, str(exc)))
                continue
            except Exception as exc:
                report.failed_sources += 1
                report.alerts.append(_alert(source, f"unexpected {type(exc).__name__}: {exc}", "error"))
                continue
            if problems:
                report.alerts.append(
                    _alert(
                        source,
                        f"{len(problems)} item page(s) not fetched, feed text kept: {problems[0]}",
                        "info",
                    )
                )
            for item in [it for it in items if _wanted(source, it)]:
                outcome: Outcome
                if _page_kept(corpus_dir, index, item, pages_not_modified):
                    doc_id, outcome = document_id(item.url), "unchanged"
                else:
                    doc_id, outcome = write_item(
                        corpus_dir / "docs", index, item, source.source_type, day, max_doc_bytes
                    )
                report.counts[outcome] += 1
                if outcome in ("added", "updated"):
                    report.written.append(doc_id)
                if on_item is not None:
                    on_item(doc_id, outcome)
    finally:
        report.bytes_read = fetcher.night_bytes
        fetcher.close()
        _save_state(state_path, cache, index)
    return report


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
