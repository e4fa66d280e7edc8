"""Collect: watch the feeds and web pages of ``<corpus>/sources.toml`` and write each new item as a
corpus document (docs/corpus-format.md, "Sources to watch"). A failing source is one alert, never a
failed night.

The fetching half (httpx, feedparser, trafilatura, lxml: ~0.2 s of CPU to import) is imported when
first used, not by every night that only asks whether ``sources.toml`` exists (issue 40 item 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from veille.collect.sources import sources_file

if TYPE_CHECKING:
    from veille.collect.run import CollectReport, collect_corpus, collect_night

__all__ = ["CollectReport", "collect_corpus", "collect_night", "sources_file"]

_FROM_RUN = frozenset({"CollectReport", "collect_corpus", "collect_night"})


def __getattr__(name: str) -> Any:
    if name in _FROM_RUN:
        from veille.collect import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
