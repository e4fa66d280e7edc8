"""Entry point ``flows.ingest:ingest_flow``: the flow is veille.flows.ingest."""

from veille.flows.ingest import ingest_flow, ingest_settings

__all__ = ["ingest_flow", "ingest_settings"]
