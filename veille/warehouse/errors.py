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
