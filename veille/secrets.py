"""The providers' API keys: where they come from, and how we keep them out of every message.

A key is read at the moment a client is built (never at import, never into Settings), from its
provider's variables (the registry's ``key_variables``: Gemini's ``GOOGLE_API_KEY`` /
``GEMINI_API_KEY``, the SDK's own precedence, GOOGLE_API_KEY wins; ``OPENAI_API_KEY``) or from a
Prefect Secret block named by a setting (``api_key_secret_block``, ``openai_api_key_secret_block``). It is held in a :class:`SecretValue`
whose ``repr`` is masked and which refuses to be pickled, and every error text we wrap goes through
:func:`scrub` first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from typing import TYPE_CHECKING, Any, NoReturn

from veille.providers import key_variables  # every provider's key variables (the registry)

if TYPE_CHECKING:
    from veille.settings import Settings

__all__ = [
    "MissingApiKeyError",
    "ScrubFilter",
    "SecretValue",
    "configured_secrets",
    "install_log_scrubbing",
    "register_secret",
    "resolve_api_key",
    "resolve_key",
    "scrub",
    "scrub_data",
    "scrub_exception",
    "scrub_text",
    "url_password",
]

_MASK = "***"
# A password in a URL's user information (``smtp://user:password@host``, ``mailtos://…``): an Apprise
# delivery URL, a proxy, a database. Shorter passwords than this are not masked (too many false hits).
_USERINFO_RE = re.compile(r"(?<=[A-Za-z0-9+.-]://)([^\s:/@]*):([^\s/@]{4,})@")
_MIN_SECRET = 6  # a "secret" this short would mask ordinary words
_registered: set[str] = set()
_registered_lock = threading.Lock()


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
    """The Gemini key from the environment, else from the Prefect Secret block, else ``None``."""
    from veille.settings import api_key_from_env  # here: this module is imported by veille itself

    return resolve_key(api_key_from_env(), settings.api_key_secret_block, "api_key_secret_block")


def resolve_key(from_env: str | None, block_name: str | None, setting: str) -> SecretValue | None:
    """A provider's key: ``from_env`` (its SDK's variable), else the Prefect Secret block named
    ``block_name`` (the settings field ``setting``), else ``None``."""
    if from_env and from_env.strip():
        return SecretValue(from_env.strip())
    if block_name:
        # Imported lazily: Prefect is heavy and only needed when a block is configured.
        from prefect.blocks.system import Secret

        try:
            block: Any = Secret.load(block_name, _sync=True)  # type: ignore[call-arg]
        except ValueError as exc:  # Prefect raises ValueError for an unknown block name
            raise MissingApiKeyError(
                f"Prefect Secret block {block_name!r} (settings.{setting}) could not be loaded: "
                f"{type(exc).__name__}"
            ) from None
        value = block.get()
        if not isinstance(value, str) or not value.strip():
            raise MissingApiKeyError(f"Prefect Secret block {block_name!r} does not hold a non-empty string")
        register_secret(value)  # masked by every writer, like the environment's key
        return SecretValue(value.strip())
    return None


def register_secret(value: str | SecretValue | None) -> None:
    """Mask ``value`` in everything written from now on in this process (a Prefect Secret block's
    key, a delivery URL read from its variable). Values shorter than six characters are ignored."""
    raw = value.get() if isinstance(value, SecretValue) else value
    if raw and len(raw.strip()) >= _MIN_SECRET:
        with _registered_lock:
            _registered.add(raw.strip())


def url_password(url: str) -> str:
    """The password of ``url``'s user information (``smtp://user:password@host``), or ``""``."""
    match = _USERINFO_RE.search(url)
    return match.group(2) if match else ""


def configured_secrets(environ: Any = None) -> tuple[str, ...]:
    """Every secret this process knows, longest first (so a key containing another is masked
    whole): the model key variables and the registered values (delivery URLs and their passwords,
    a Secret block's key). Read at each call: a test or a worker may set the environment after
    import. Not every URL of the environment: a database URL's weak password (« prefect ») would
    mask an ordinary word everywhere."""
    env = os.environ if environ is None else environ
    found = {env.get(name, "").strip() for name in key_variables()}
    with _registered_lock:
        found |= _registered
    return tuple(sorted((v for v in found if len(v) >= _MIN_SECRET), key=lambda v: (-len(v), v)))


def scrub_text(text: str) -> str:
    """``text`` with every configured secret masked (:func:`configured_secrets`): the one function
    every writer (run folder, call journal, Parquet, response cache, artifacts, logs, deliveries,
    error lines) passes its text through."""
    if not text:
        return text
    # Known values only: an example password in a document (Requests' release notes show
    # ``https://user:pass@proxy:8080``) is a quotation, not a secret, and is left as written.
    return scrub(text, *configured_secrets())


def scrub_data(value: Any) -> Any:
    """``value`` (JSON-like data: dicts, lists, strings, numbers) with every string scrubbed."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {scrub_data(k): scrub_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_data(v) for v in value)
    return value


def scrub_exception(exc: BaseException | None) -> None:
    """Masks every configured secret in ``exc`` and its causes, in place, before the flow raises it:
    Prefect pickles a failed flow run's exception as its result (PREFECT_HOME/storage), not
    through logging. (Failed task runs' exceptions are not persisted; their state messages are
    scrubbed by veille.ops.statescrub.) Never raises: the caller re-raises the run's own error."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        _set(exc, "args", tuple(scrub_data(a) for a in exc.args))
        if isinstance(exc, OSError):  # its text is built from these, not from args
            for name in ("strerror", "filename", "filename2"):
                if isinstance(getattr(exc, name), str):
                    _set(exc, name, scrub_text(getattr(exc, name)))
        for name, value in list(getattr(exc, "__dict__", {}).items()):
            if isinstance(value, str | list | tuple | dict):
                _set(exc, name, scrub_data(value))
        exc = exc.__cause__ or exc.__context__


def _set(exc: BaseException, name: str, value: Any) -> None:
    # object.__setattr__: an exception class that forbids setting attributes (a frozen error) is
    # masked all the same; a property without a setter is left as it is.
    with contextlib.suppress(AttributeError, TypeError):
        object.__setattr__(exc, name, value)


def scrub(text: str, *secrets: SecretValue | str | None) -> str:
    """``text`` with every occurrence of each secret (and of ``key=...`` URL parameters) masked."""
    for secret in secrets:
        value = secret.get() if isinstance(secret, SecretValue) else secret
        if value:
            text = text.replace(value, _MASK)
    # Belt and braces: an API key passed as a query parameter by some proxy or older client.
    return re.sub(r"([?&]key=)[^&\s'\"]+", r"\1" + _MASK, text)


_factory_lock = threading.Lock()


def install_log_scrubbing() -> None:
    """Scrub every log record of the process as it is made (message, arguments and exception text),
    whichever logger or handler writes it (console, files, Prefect's API handler). Idempotent."""
    with _factory_lock:
        current = logging.getLogRecordFactory()
        if getattr(current, "veille_scrubs", False):
            return

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = current(*args, **kwargs)
            _scrub_record(record)
            return record

        factory.veille_scrubs = True  # type: ignore[attr-defined]
        logging.setLogRecordFactory(factory)


def _scrub_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a malformed record is the handler's problem; never break the caller
        return
    cleaned = scrub_text(message)
    if cleaned != message:
        record.msg, record.args = cleaned, None
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        formatted = logging.Formatter().formatException(record.exc_info)
        record.exc_text = scrub_text(formatted)


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
