"""The OpenAI-compatible provider: Ollama, vLLM, llama.cpp's server, OpenAI itself (``openai`` SDK).

Address, model and key:

- base URL: ``settings.openai_base_url``, else the SDK's own ``OPENAI_BASE_URL``, else OpenAI's;
- key: ``OPENAI_API_KEY`` (the SDK's variable), else the Prefect Secret block named by
  ``settings.openai_api_key_secret_block``, else none (a local server asks for none: the SDK is
  given a placeholder that is no secret);
- model: the role's (``roles.<role>.model``), else ``settings.openai_model``, else the first model
  the server lists on ``GET /models`` (asked once per backend; that request is counted in the
  ``http_requests`` of the answer that needed it, so the journal sums what the server received).

Structured output: ``response_format`` ``json_schema`` with the role's wire schema (the same one
Gemini receives, :func:`veille.models.wire.wire_schema`) where the server enforces it; JSON mode
(``json_object``) with the schema stated in the system message where it does not — a per-model
choice, ``settings.openai_output``. Either way the text is validated above, by the caller.

Like the Gemini backend, one ``generate`` is exactly one HTTP request: the SDK's retries are off
(``max_retries=0``) and every failure becomes a typed, scrubbed error for the one retry layer
(:mod:`veille.models.retry`): 408, 409, 429 and 5xx, time-outs and connection errors are
``retryable``; a 429's ``Retry-After`` is honoured; a connection that never opened sent nothing.
Tokens come from ``usage`` (``completion_tokens`` less its reasoning part is the output; a server
that reports none gets our estimate, flagged ``estimated``). A model the price table does not know
costs 0 when the server is in the building (a loopback or private address, ``unpriced_is_free``),
null with an alert otherwise.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from veille.models.base import (
    ModelDefaults,
    ModelError,
    ModelRequest,
    ProviderError,
    ProviderTransientError,
    RawResponse,
    Usage,
)
from veille.models.gemini import REASK_TEMPLATE, _never_sent, _transport_kind
from veille.models.wire import wire_schema
from veille.secrets import ScrubFilter, SecretValue, resolve_key, scrub, scrub_text
from veille.tokens import estimate_tokens

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from veille.settings import Settings

__all__ = ["OpenAICompatError", "OpenAICompatModel", "OpenAICompatTransientError", "is_local_url"]

logger = logging.getLogger(__name__)

TRANSIENT_STATUS_CODES = {408, 409, 429, 500, 502, 503, 504}
_SDK_LOGGERS = ("openai", "openai._base_client", "httpx", "httpx2")
_OPENAI_URL = "https://api.openai.com/v1"
_NO_KEY = "sans-cle"  # what the SDK is given when no key is configured (a local server needs none)
# The seam's finish reasons (Gemini's vocabulary, read by veille.models.feedback and the caller).
_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY", "tool_calls": "TOOL_CALLS"}
# JSON mode: the schema is stated in the system message (French, like every prompt).
_SCHEMA_NOTE = "\n\nRéponds uniquement avec un objet JSON conforme à ce schéma JSON, sans texte autour :\n"


class OpenAICompatError(ProviderError):
    """A non-retryable failure (4xx, unexpected answer); ``error_class`` names the cause."""


class OpenAICompatTransientError(ProviderTransientError):
    """Rate limit, 5xx, time-out or connection error: the call's retry policy may send again."""


def is_local_url(url: str) -> bool:
    """Whether ``url`` names a server in the building: localhost, a ``.local`` name, or a
    loopback, private or link-local address (its tokens are not billed by anyone)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


class OpenAICompatModel(ModelDefaults):
    """The ``openai`` provider. ``generate`` must always run on the same event loop (the client's)."""

    name = "openai"
    cacheable = True  # a paid or slow server: an unchanged rerun is served from the response cache
    sends_http = True

    def __init__(self, settings: Settings, *, api_key: SecretValue | None = None) -> None:
        self._settings = settings
        self._key = (
            api_key
            if api_key is not None
            else resolve_key(
                os.environ.get("OPENAI_API_KEY"),
                settings.openai_api_key_secret_block,
                "openai_api_key_secret_block",
            )
        )
        self.base_url = settings.openai_base_url or os.environ.get("OPENAI_BASE_URL") or _OPENAI_URL
        self.unpriced_is_free = is_local_url(self.base_url)
        self._client: AsyncOpenAI | None = None
        self._listed: str | None = None  # the first model GET /models listed (asked once)
        self._log_filter: ScrubFilter | None = None

    def __repr__(self) -> str:
        return f"OpenAICompatModel(base_url={self.base_url!r})"

    def __reduce__(self) -> Any:
        raise TypeError(
            "OpenAICompatModel is not picklable; pickle the ModelClient (it rebuilds its backend)"
        )

    @property
    def secrets(self) -> tuple[SecretValue, ...]:
        return () if self._key is None else (self._key,)

    def _sdk(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI

            if self._key is not None and self._log_filter is None:
                self._log_filter = ScrubFilter(self._key)
                for name in _SDK_LOGGERS:
                    logging.getLogger(name).addFilter(self._log_filter)
            self._client = AsyncOpenAI(
                api_key=self._key.get() if self._key is not None else _NO_KEY,
                base_url=self.base_url,
                timeout=self._settings.request_timeout_ms / 1000,
                max_retries=0,  # one request per generate: veille.models.retry decides (module docstring)
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
        if self._log_filter is not None:
            for name in _SDK_LOGGERS:
                logging.getLogger(name).removeFilter(self._log_filter)
            self._log_filter = None

    # --- one request ------------------------------------------------------------------------
    async def generate(self, request: ModelRequest) -> RawResponse:
        """One chat completion (plus, the first time no model is named, one ``GET /models``)."""
        if request.tools:
            raise OpenAICompatError(
                f"the openai provider runs no built-in tool ({', '.join(request.tools)})",
                error_class="UnsupportedTool",
            )
        listed = 0
        model = request.model or self._settings.openai_model or self._listed
        if not model:
            model, listed = await self._first_listed(), 1
        try:
            response = await self._sdk().chat.completions.create(**self._body(request, model))
        except Exception as exc:
            error = self._error(exc)
            error.http_requests += listed
            raise error from None
        raw = self._raw(response, request, model)
        return replace(raw, http_requests=raw.http_requests + listed)

    def _body(self, request: ModelRequest, model: str) -> dict[str, Any]:
        schema = wire_schema(request.output_schema)
        mode = self._settings.openai_output.get(model, "json_schema")
        system = request.system
        if mode == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                # Not "strict": OpenAI's strict mode refuses maxLength/maxItems, which the wire
                # schema carries; servers that enforce schemas (vLLM, llama.cpp, Ollama) use them.
                "json_schema": {"name": request.role, "schema": schema, "strict": False},
            }
        else:  # JSON mode: the server only promises JSON, the schema is told, validation does the rest
            response_format = {"type": "json_object"}
            system += _SCHEMA_NOTE + json.dumps(schema, ensure_ascii=False)
        messages: list[dict[str, str]] = [{"role": "system", "content": system}]
        messages.append({"role": "user", "content": request.prompt})
        for invalid, error in request.feedback:
            if invalid.strip():
                messages.append({"role": "assistant", "content": invalid})
            messages.append({"role": "user", "content": REASK_TEMPLATE.format(error=error)})
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": request.temperature,
            "response_format": response_format,
        }
        if request.max_output_tokens is not None:  # the request's output cap (veille.models.outcap)
            body["max_tokens"] = request.max_output_tokens
        return body

    async def _first_listed(self) -> str:
        """The first model ``GET /models`` lists (kept for the backend's life)."""
        try:
            page = await self._sdk().models.list()
        except Exception as exc:
            raise self._error(exc) from None
        ids = [item.id for item in page.data]
        if not ids:
            raise OpenAICompatError(
                f"the server at {self.base_url} lists no model on GET /models: set VEILLE_OPENAI_MODEL "
                "or roles.<role>.model",
                error_class="NoModel",
            )
        self._listed = ids[0]
        logger.info("openai provider: no model configured, using %s (first of GET /models)", ids[0])
        return ids[0]

    def _raw(self, response: Any, request: ModelRequest, model: str) -> RawResponse:
        choice = response.choices[0] if getattr(response, "choices", None) else None
        message = choice.message if choice is not None else None
        text = (message.content or "") if message is not None else ""
        refusal = getattr(message, "refusal", None) if message is not None else None
        finish = choice.finish_reason if choice is not None else None
        usage = response.usage
        if usage is not None and usage.prompt_tokens is not None:
            details = getattr(usage, "completion_tokens_details", None)
            reasoning = (getattr(details, "reasoning_tokens", None) or 0) if details is not None else 0
            cached_details = getattr(usage, "prompt_tokens_details", None)
            cached = (
                (getattr(cached_details, "cached_tokens", None) or 0) if cached_details is not None else 0
            )
            completion = usage.completion_tokens or 0
            counted = Usage(
                input_tokens=usage.prompt_tokens,
                output_tokens=max(0, completion - reasoning),
                reasoning_tokens=reasoning,
                cache_read_tokens=cached,
            )
        else:  # a server that reports no usage: our estimate, said to be one
            prompt = request.system + request.prompt + "".join(a + e for a, e in request.feedback)
            counted = Usage(estimate_tokens(prompt), estimate_tokens(text), estimated=True)
        return RawResponse(
            text=text,
            usage=counted,
            model=model,
            finish_reason=_FINISH.get(str(finish), None if finish is None else str(finish).upper()),
            blocked_reason="REFUSAL" if refusal and not text else None,
            http_requests=1,
        )

    # --- errors -----------------------------------------------------------------------------
    def _scrub(self, text: str) -> str:
        return scrub_text(scrub(text, *self.secrets))

    def _error(self, exc: Exception) -> ModelError:
        import openai

        name = type(exc).__name__
        if isinstance(exc, openai.APIStatusError):
            code = exc.status_code
            message = self._scrub(f"OpenAI-compatible server error {code}: {exc.message}")[:2000]
            error_class = "RateLimited" if code == 429 else f"HTTP{code}"
            status_error: ModelError
            if code in TRANSIENT_STATUS_CODES:
                status_error = OpenAICompatTransientError(message, error_class=error_class)
                status_error.retry_after_s = _retry_after(exc.response.headers.get("retry-after"))
            else:
                status_error = OpenAICompatError(message, error_class=error_class)
            status_error.http_requests = 1
            return status_error
        cause = exc.__cause__ or exc.__context__ or exc
        detail = self._scrub(str(cause) or name)[:500]
        if isinstance(exc, openai.APIConnectionError):  # time-outs included (APITimeoutError)
            kind = _transport_kind(cause) if isinstance(cause, Exception) else None
            never = kind == "connect" or (isinstance(cause, Exception) and _never_sent(cause))
            error_class = type(cause).__name__ if isinstance(cause, Exception) else name
            transient: ModelError = OpenAICompatTransientError(
                f"cannot reach the OpenAI-compatible server at {self.base_url} ({error_class}): {detail}; "
                "check VEILLE_OPENAI_BASE_URL / OPENAI_BASE_URL"
                if never
                else f"OpenAI-compatible request failed ({error_class}): {detail}",
                error_class=error_class,
            )
            transient.http_requests = 0 if never else 1
            return transient
        if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError):
            glitch = OpenAICompatTransientError(f"the server answered a body that is not JSON: {detail}",
                                                error_class=name)  # fmt: skip
            glitch.http_requests = 1
            return glitch
        other = OpenAICompatError(f"OpenAI-compatible request failed ({name}): {detail}", error_class=name)
        other.http_requests = 1
        return other


def _retry_after(value: str | None) -> float | None:
    try:
        return None if value is None else max(0.0, float(value.strip()))
    except ValueError:
        return None
