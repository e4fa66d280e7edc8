"""Collect: watch the feeds and web pages of ``<corpus>/sources.toml`` and write each new item as a
corpus document (docs/corpus-format.md, "Sources to watch"). A failing source is one alert, never a
failed night."""

from __future__ import annotations

from veille.collect.run import CollectReport, collect_corpus, collect_night, sources_file

__all__ = ["CollectReport", "collect_corpus", "collect_night", "sources_file"]
