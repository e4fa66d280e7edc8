"""Task: send the night's dossier to the corpus's recipients (``<corpus>/delivery.toml``)."""

from __future__ import annotations

from prefect.cache_policies import NO_CACHE

from veille.alerts import Alert
from veille.delivery.night import deliver_night
from veille.run.folder import RunFolder, RunInfo
from veille.settings import Settings
from veille.tasks.datatask import task

__all__ = ["deliver_dossier"]


# NO_CACHE, no retries: one attempt per channel each night; a failure is an alert, never a raise.
@task(name="deliver", cache_policy=NO_CACHE)
def deliver_dossier(settings: Settings, folder: RunFolder, info: RunInfo) -> list[Alert]:
    try:
        return deliver_night(settings.corpus_dir, folder.path, info)
    except Exception as exc:  # the night is complete whatever happens here; the text may hold a URL
        message = f"envoi du dossier interrompu ({type(exc).__name__})"
        return [Alert(code="delivery.failed", severity="error", stage="delivery", message=message)]
