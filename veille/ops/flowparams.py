"""A flow run's parameters recorded without FastAPI's encoder when they are plain JSON already.

Prefect records the parameters of each flow run it creates through ``Flow.serialize_parameters``,
which imports ``fastapi.encoders`` (FastAPI, Starlette and their models: 0.12 s of CPU, measured in
process once Prefect is imported) to call ``jsonable_encoder`` on every value. The nightly flow's
parameters, as ``veille run`` and the deployments pass them, are strings, booleans, integers, None and
lists of strings, which that encoder returns unchanged (a list copied): for them the same values are
given without the import. Any other value (an enum, a path, a model, a tuple, a nested structure)
goes through Prefect's own method, so what the API records is the same in every case
(``tests/test_flowparams.py`` checks it against ``jsonable_encoder``).
"""

from __future__ import annotations

from typing import Any

from prefect import Flow

__all__ = ["plain_parameters"]

# Exact types (not subclasses: a str enum is encoded as its value by jsonable_encoder).
_SCALARS = (type(None), bool, int, str)


def _plain(value: Any) -> bool:
    if type(value) in _SCALARS:
        return True
    return type(value) is list and all(type(item) in _SCALARS for item in value)


def plain_parameters(flow: Flow[Any, Any]) -> None:
    """Make ``flow`` record plain JSON parameters as they are, others through Prefect's method."""
    prefect_serialize = flow.serialize_parameters

    def serialize_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
        if all(_plain(value) for value in parameters.values()):
            return {key: list(value) if type(value) is list else value for key, value in parameters.items()}
        return prefect_serialize(parameters)

    flow.serialize_parameters = serialize_parameters  # type: ignore[method-assign]
