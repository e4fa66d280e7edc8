"""The Gemini API key: where it comes from, and how we keep it out of every message.

The key is read at the moment a client is built (never at import, never into Settings), from
``GOOGLE_API_KEY`` / ``GEMINI_API_KEY`` (the SDK's own precedence: GOOGLE_API_KEY wins) or from a
Prefect Secret block named by ``settings.api_key_secret_block``. It is held in a :class:`SecretValue`
whose ``repr`` is masked and which refuses to be pickled, and every error text we wrap goes through
:func:`scrub` first.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, NoReturn

from veille.settings import api_key_from_env

if TYPE_CHECKING:
    from veille.settings import Settings

__all__ = ["MissingApiKeyError", "ScrubFilter", "SecretValue", "resolve_api_key", "scrub"]

_MASK = "***"


class MissingApiKeyError(RuntimeError):
    """Gemini was selected but no key is configured."""


class SecretValue:
    """A secret string that does not leak through ``repr``, ``str``, f-strings or pickling."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"SecretValue({_MASK})"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:
        raise TypeError("a SecretValue is never pickled; rebuild the client where it is needed")


def resolve_api_key(settings: Settings) -> SecretValue | None:
    """The key from the environment, else from the Prefect Secret block, else ``None``."""
    from_env = api_key_from_env()
    if from_env:
        return SecretValue(from_env.strip())
    if settings.api_key_secret_block:
        # Imported lazily: Prefect is heavy and only needed when a block is configured.
        from prefect.blocks.system import Secret

        try:
            block: Any = Secret.load(settings.api_key_secret_block, _sync=True)  # type: ignore[call-arg]
        except ValueError as exc:  # Prefect raises ValueError for an unknown block name
            raise MissingApiKeyError(
                f"Prefect Secret block {settings.api_key_secret_block!r} "
                f"(settings.api_key_secret_block) could not be loaded: {type(exc).__name__}"
            ) from None
        value = block.get()
        if not isinstance(value, str) or not value.strip():
            raise MissingApiKeyError(
                f"Prefect Secret block {settings.api_key_secret_block!r} does not hold a non-empty string"
            )
        return SecretValue(value.strip())
    return None


def scrub(text: str, *secrets: SecretValue | str | None) -> str:
    """``text`` with every occurrence of each secret (and of ``key=...`` URL parameters) masked."""
    for secret in secrets:
        value = secret.get() if isinstance(secret, SecretValue) else secret
        if value:
            text = text.replace(value, _MASK)
    # Belt and braces: an API key passed as a query parameter by some proxy or older client.
    return re.sub(r"([?&]key=)[^&\s'\"]+", r"\1" + _MASK, text)


class ScrubFilter(logging.Filter):
    """Masks a secret in every record of the loggers it is attached to (the SDK's and httpx's).

    Defence in depth: the SDK sends the key in a header, never in a URL or a log line, but its
    retry logger prints error bodies verbatim, and a proxy could echo the key back in one.
    """

    def __init__(self, secret: SecretValue) -> None:
        super().__init__()
        self._secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the handler's problem; never break the caller
            return True
        cleaned = scrub(message, self._secret)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
