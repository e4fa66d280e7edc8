"""Entry point ``flows.veille:veille_flow`` of prefect.yaml: the flow is veille.flows.veille."""

from veille.flows.veille import veille_flow

__all__ = ["veille_flow"]
