"""The retry policy of a logical call: the one place that decides whether a failed request is sent
again, and after how long.

Below it nothing retries: the Gemini backend turns the google-genai SDK's own retries off and sends
exactly one HTTP request per ``generate``; above it the Prefect tasks never retry a model error
(``tasks/clients.py``). One logical call therefore sends at most :meth:`RetryPolicy.max_requests`
HTTP requests: one per answer it may need (``1 + reask_attempts``, schema violations fed back) plus
``http_attempts - 1`` resends after transport failures (429, 408, 5xx, time-outs, hang-ups,
connection errors), shared by the whole call. With the defaults (4 and 2): 6.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from veille.models.base import ModelError, TransientModelError

if TYPE_CHECKING:
    from veille.settings import Settings

__all__ = ["RetryPolicy", "RetryRefusedError"]


class RetryRefusedError(TransientModelError):
    """A rate limit asking for a longer wait than ``http_retry_max_delay_s`` (a daily quota,
    typically): not waited for, not retried."""

    def __init__(self, cause: ModelError, asked_s: float, limit_s: float) -> None:
        super().__init__(
            f"{cause} — the server asks to wait {asked_s:g} s, more than http_retry_max_delay_s = "
            f"{limit_s:g} s (quota exhausted?)"
        )
        self.error_class = getattr(cause, "error_class", None) or type(cause).__name__
        self.expected_failure = getattr(cause, "expected_failure", False)


@dataclass(frozen=True)
class RetryPolicy:
    """How many requests a logical call may send, and how long it waits between them."""

    http_attempts: int = 4  # requests for one answer: the first plus http_attempts - 1 resends
    reask_attempts: int = 2  # answers outside the schema fed back and asked again
    initial_delay_s: float = 1.0
    max_delay_s: float = 60.0  # cap of the backoff, and the longest server-asked wait we accept

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(
            http_attempts=max(1, settings.http_attempts),
            reask_attempts=max(0, settings.reask_attempts),
            initial_delay_s=settings.http_retry_initial_delay_s,
            max_delay_s=settings.http_retry_max_delay_s,
        )

    def answers(self, grounded: bool) -> int:
        """Answers a call may ask for: a grounded one is never re-asked (each is a billed search,
        and code, not the model, writes its JSON)."""
        return 1 if grounded else 1 + self.reask_attempts

    def max_requests(self, grounded: bool = False) -> int:
        """The bound on HTTP requests of one logical call (what the docs promise)."""
        return self.answers(grounded) + self.http_attempts - 1

    def delay_before_resend(self, error: BaseException, failures: int) -> float | None:
        """Seconds to wait before sending again after the ``failures``-th transport failure of the
        call (1-based), or ``None``: do not resend, raise ``error``. Raises :class:`RetryRefusedError`
        when the server asks for a wait longer than ``max_delay_s``."""
        if not isinstance(error, ModelError) or not error.retryable:
            return None
        if failures >= self.http_attempts:
            return None
        asked = getattr(error, "retry_after_s", None)
        if asked is not None:
            if asked > self.max_delay_s:
                raise RetryRefusedError(error, asked, self.max_delay_s) from error
            return float(asked)
        return self.backoff(failures)

    def backoff(self, failures: int) -> float:
        """Exponential backoff with jitter: initial × 2^(failures-1), capped, plus up to 1 s."""
        delay = min(self.max_delay_s, self.initial_delay_s * 2 ** (failures - 1))
        return delay + random.uniform(0, min(1.0, self.initial_delay_s))
