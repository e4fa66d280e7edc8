"""Repository entry points for Prefect deployments (prefect.yaml); the flows live in veille.flows.

Not part of the wheel (pyproject.toml): an installed veille has no generic top-level ``flows``
package; a checkout keeps the entrypoints ``flows.veille:veille_flow`` and ``flows.ingest:ingest_flow``
that existing deployments were registered with.
"""
