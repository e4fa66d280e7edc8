"""The flow run's name and tags in the Prefect UI: the veille run id, unless someone named the run.

The run id is made when the run's folder is created, inside the flow body, after Prefect named the
flow run; so the run is renamed through the API (``flow_run_name`` is evaluated before the body and
would need the id earlier). Prefect's generated names ("brave-otter") and the run id of a previous
attempt are replaced by this attempt's run id; a name given in the UI or by ``--name`` is kept.
Every attempt's run id is also added as a tag (``run:<id>``), so after a Retry the first attempt's
id is still on the flow run.
"""

from __future__ import annotations

import logging
import re

__all__ = ["RUN_TAG_PREFIX", "name_flow_run", "run_name"]

logger = logging.getLogger(__name__)

RUN_TAG_PREFIX = "run:"
_GENERATED = re.compile(r"[a-z]+-[a-z]+")  # prefect's generate_slug(2)
_RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")


def run_name(current: str | None, run_id: str) -> str:
    """The name to show: ``run_id`` unless ``current`` was given by a person."""
    if not current or _GENERATED.fullmatch(current) or _RUN_ID.fullmatch(current):
        return run_id
    return current


def name_flow_run(flow_run_id: object, name: str) -> bool:
    """Name flow run ``flow_run_id`` after run id ``name`` (a person's name kept) and tag it with
    the run id; False (logged, not raised) if the API refuses."""
    if flow_run_id is None:
        return False
    from uuid import UUID

    from prefect.client.orchestration import get_client

    try:
        with get_client(sync_client=True) as client:
            run = client.read_flow_run(UUID(str(flow_run_id)))
            tags = sorted({*(run.tags or []), f"{RUN_TAG_PREFIX}{name}"})
            client.update_flow_run(UUID(str(flow_run_id)), name=run_name(run.name, name), tags=tags)
    except Exception as exc:  # naming is cosmetic: never fail a run for it
        logger.warning("could not name flow run %s %r: %s", flow_run_id, name, exc)
        return False
    return True
