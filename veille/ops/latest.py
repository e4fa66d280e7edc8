"""Last night's dossier in one click from the deployment page: the deployment's description ends
with a link to the newest report artifact (complete or partial), rewritten after each night."""

from __future__ import annotations

import logging
import os

__all__ = ["LATEST_MARK", "latest_description", "point_deployment_at"]

logger = logging.getLogger(__name__)

LATEST_MARK = "**Dernier dossier** : "


def latest_description(current: str | None, run_id: str, complete: bool, url: str) -> str:
    """``current`` without its previous link line, then the link to this night's dossier."""
    kept = [line for line in (current or "").splitlines() if not line.startswith(LATEST_MARK)]
    base = "\n".join(kept).rstrip()
    state = "complet" if complete else "partiel"
    link = f"{LATEST_MARK}[{run_id} ({state})]({url})"
    return f"{base}\n\n{link}" if base else link


def point_deployment_at(deployment_id: object, artifact_id: object, run_id: str, complete: bool) -> bool:
    """Rewrite the deployment's description; False (logged, not raised) when it cannot."""
    if deployment_id is None or artifact_id is None:
        return False
    from uuid import UUID

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import DeploymentUpdate
    from prefect.settings import get_current_settings

    ui = (os.environ.get("PREFECT_UI_URL") or get_current_settings().ui_url or "").rstrip("/")
    url = f"{ui}/artifacts/artifact/{artifact_id}"
    try:
        with get_client(sync_client=True) as client:
            deployment = client.read_deployment(UUID(str(deployment_id)))
            text = latest_description(deployment.description, run_id, complete, url)
            client.update_deployment(deployment.id, DeploymentUpdate(description=text))
    except Exception as exc:  # cosmetic: the artifact exists whatever happens here
        logger.warning("could not link deployment %s to run %s: %s", deployment_id, run_id, exc)
        return False
    return True
