"""Prefect flows, one per file (the repository's flows/ holds thin entry points to them)."""
