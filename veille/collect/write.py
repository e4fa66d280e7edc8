"""Collected items as corpus documents (docs/corpus-format.md), idempotently.

The id is code's: ``web-`` + the first 10 hex digits of SHA-1 of the item's URL (``guid:<id>`` for a
feed entry without an http(s) link), so the same URL is always the same document. The same URL with the same content is left untouched (not even its mtime,
so ingestion's stat shortcut holds); with new content it is rewritten under the same id (ingestion
sees an update). Another URL whose text is already in the corpus is a duplicate and is not written.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

import yaml

from veille.collect.items import Item

__all__ = ["DocIndex", "Outcome", "document_id", "render_document", "write_item"]

Outcome = Literal["added", "updated", "unchanged", "duplicate"]
_FRONT_MATTER_BYTES = 4_096  # room kept for the front matter under max_doc_bytes
# What a UTF-8 text file cannot hold or ingestion refuses (NUL means binary): C0 controls but tab and
# newline, DEL, lone surrogates, and the two noncharacters.
_UNWRITABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def _writable(text: str) -> str:
    return _UNWRITABLE.sub(" ", text.replace("\r\n", "\n"))


def document_id(key: str) -> str:
    """``web-<sha1(key)[:10]>`` (``key``: the item's URL, else ``guid:<id>``): stable across nights,
    in a namespace no hand-written id uses."""
    return "web-" + hashlib.sha1(key.strip().encode("utf-8")).hexdigest()[:10]


def content_hash(item: Item) -> str:
    """What decides 'changed': title, summary and text (not the dates: the collect day changes nightly)."""
    text = "\x1f".join((item.title, item.summary, " ".join(item.body.split())))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class DocIndex:
    """Documents collect wrote: id -> {"url", "hash"} (kept in the collect state file)."""

    docs: dict[str, dict[str, str]] = field(default_factory=dict)

    def id_with_hash(self, digest: str) -> str | None:
        return next((doc_id for doc_id, entry in self.docs.items() if entry.get("hash") == digest), None)


def render_document(doc_id: str, item: Item, source_type: str, collected: date, max_bytes: int) -> str:
    """The Markdown file: front matter (id, date when the item gives one, source_type, title, url
    when there is one, summary, the day it was collected) and the body, cut to fit ``max_bytes``.
    An item without a date gets none: the collect day is when it was fetched, not written (issue 36;
    ingestion reads a publication date in its text, else « date inconnue »)."""
    title = _writable(item.title)
    meta = {"id": doc_id, "source_type": source_type, "title": title}
    if item.day is not None:
        meta = {"id": doc_id, "date": item.day.isoformat(), **meta}
    if item.url is not None:
        meta["url"] = item.url
    if summary := _writable(item.summary).strip():
        meta["summary"] = summary
    meta["collected"] = collected.isoformat()
    front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
    room = max(max_bytes - _FRONT_MATTER_BYTES, 1_000)
    body = _writable(item.body).encode("utf-8")[:room].decode("utf-8", "ignore").strip()
    return f"---\n{front}---\n\n# {title}\n\n{body}\n"


def write_item(
    docs_dir: Path, index: DocIndex, item: Item, source_type: str, today: date, max_bytes: int
) -> tuple[str, Outcome]:
    """Write ``item`` as ``docs/<id>.md`` unless it is unchanged or a duplicate; (id, outcome)."""
    doc_id, digest = document_id(item.key), content_hash(item)
    path = docs_dir / f"{doc_id}.md"
    known = index.docs.get(doc_id)
    if known is not None and known.get("hash") == digest and path.exists():
        return doc_id, "unchanged"
    if known is None and (other := index.id_with_hash(digest)) is not None and other != doc_id:
        return other, "duplicate"
    existed = path.exists()
    text = render_document(doc_id, item, source_type, today, max_bytes)
    docs_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")  # hidden: ingestion skips it if we die before the rename
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    outcome: Outcome = "updated" if existed else "added"
    index.docs[doc_id] = {"url": item.key, "hash": digest}
    return doc_id, outcome
