"""Thin Prefect @task wrappers over the pure functions in veille/."""
