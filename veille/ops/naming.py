"""The flow run's name in the Prefect UI: the veille run id, not a random "brave-otter".

The run id is made when the run's folder is created, inside the flow body, after Prefect named the
flow run; so the run is renamed through the API (``flow_run_name`` is evaluated before the body and
would need the id earlier). Each attempt of a retried flow run has its own run id: the flow run
shows the latest.
"""

from __future__ import annotations

import logging

__all__ = ["name_flow_run"]

logger = logging.getLogger(__name__)


def name_flow_run(flow_run_id: object, name: str) -> bool:
    """Rename flow run ``flow_run_id`` to ``name``; False (logged, not raised) if the API refuses."""
    if flow_run_id is None:
        return False
    from uuid import UUID

    from prefect.client.orchestration import get_client

    try:
        with get_client(sync_client=True) as client:
            client.update_flow_run(UUID(str(flow_run_id)), name=name)
    except Exception as exc:  # naming is cosmetic: never fail a run for it
        logger.warning("could not name flow run %s %r: %s", flow_run_id, name, exc)
        return False
    return True
