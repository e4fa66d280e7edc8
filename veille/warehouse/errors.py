"""The warehouse's errors: every message names the file and what is expected."""

from __future__ import annotations

__all__ = ["QueryTimeoutError", "ReadOnlyQueryError", "RunAlreadyRecordedError", "WarehouseError"]


class WarehouseError(Exception):
    """Bad input or state for the warehouse; the message names the file and what is expected."""

    retryable = False  # the same input would fail the same way


class RunAlreadyRecordedError(WarehouseError):
    """The run id already has a committed ``runs`` file: a run is never written twice."""


class ReadOnlyQueryError(WarehouseError):
    """A query tried to write, attach, copy or read outside the warehouse."""


class QueryTimeoutError(WarehouseError):
    """A query ran longer than the query timeout (``Settings.query_timeout_s``) and was interrupted."""

    @classmethod
    def after(cls, elapsed_s: float, timeout_s: float) -> QueryTimeoutError:
        """The one message of a stopped statement: how long it ran, the limit, where it is set."""
        return cls(
            f"query stopped after {elapsed_s:.1f} s: longer than the {timeout_s:g} s query timeout "
            "(--timeout, setting query_timeout_s, VEILLE_QUERY_TIMEOUT_S)"
        )
