"""Task: screen the corpus for prompt injection before any model reads it (alerts only)."""

from __future__ import annotations

from collections.abc import Sequence

from prefect.cache_policies import NO_CACHE

from veille.alerts import Alert
from veille.roles.planner import CatalogueEntry
from veille.settings import Settings
from veille.steps.screen_cache import screen_corpus
from veille.tasks.datatask import task

__all__ = ["screen_documents"]


# NO_CACHE: it reads the corpus database (state outside its inputs); each document's scan is cached by
# content in the warehouse's cache folder, so a night with nothing changed reads no body.
@task(name="screen-documents", cache_policy=NO_CACHE)
def screen_documents(settings: Settings, catalogue: Sequence[CatalogueEntry]) -> list[Alert]:
    """One ``injection.suspected`` alert per catalogued document that looks written to steer the model."""
    return screen_corpus(settings.database, catalogue, settings.cache_dir)
