"""The provider registry: every backend a night may use, by name, and nothing else names one.

A provider is one module implementing :class:`veille.models.base.Model` (generate with a schema;
usage; finish reason; grounding where it has it; its errors mapped to the seam's
:class:`~veille.models.base.ModelError` / :class:`~veille.models.base.TransientModelError`) and one
entry of :data:`PROVIDERS`. Settings validation (``backend``, ``roles.<role>.provider``), the CLI's
``--backend`` choices, the flows and the client builder (:mod:`veille.backends`) read this table;
adding a provider is one module plus one line here (docs/models.md « Add a provider »).

The entries name their factory as ``"module:callable"`` and import it only when a night builds the
backend: reading the registry (settings, ``--help``) imports no SDK, and this module imports
neither the seam nor the offline engine (it sits beside :mod:`veille.backends`, which joins them).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from veille.models.base import Model
    from veille.settings import Settings

__all__ = [
    "AUTO",
    "PROVIDERS",
    "BackendChoice",
    "Provider",
    "UnknownProviderError",
    "backend_choices",
    "backend_help",
    "build_provider",
    "check_backend",
    "key_variables",
    "provider",
    "provider_names",
    "provider_version",
    "registered",
]

AUTO = "auto"  # the first provider whose ``configured`` says so, in registry order; else "offline"


class UnknownProviderError(ValueError):
    """A name that is not in the registry; the message lists the known ones."""


@dataclass(frozen=True)
class Provider:
    """One registry entry."""

    name: str
    # "module:callable": called with the Settings, returns the backend (a ``Model``). A callable
    # instead (a provider registered at run time by :func:`registered`, e.g. a test double) is an
    # object of this process: a run on it cannot be rebuilt in another one (``in_process``).
    factory: str | Callable[[Settings], object]
    summary: str  # one line, shown by ``veille run --help``
    # Whether ``backend = "auto"`` picks this provider (a key or address is configured). None: only
    # when named — a provider that would send documents somewhere must be asked for by name.
    configured: Callable[[Settings], bool] | None = None
    # "module:callable" (or a callable) giving the version of the code behind the answers (cache
    # keys) without building the backend; None: the answers are a provider's ("", the request
    # decides them).
    version: str | Callable[[Settings], object] | None = None
    # Whether the default role models (veille.settings, Gemini ids) are this provider's; False: a
    # role on it without a model of its own gets "" (the provider's default model).
    uses_default_role_models: bool = True
    # The environment variables holding its key (its SDK's names): masked by every writer
    # (veille.secrets.configured_secrets reads them here).
    key_variables: tuple[str, ...] = ()
    # Code answers and nothing is billed (the offline engine): ``veille grade`` asks no confirmation.
    # The seam reads the same fact from the built backend (``Model.free``).
    free: bool = False

    @property
    def in_process(self) -> bool:
        """Whether the backend is an object of this process (a callable factory), so that another
        process (a Dask worker) cannot build it from the settings."""
        return not isinstance(self.factory, str)


def _gemini_configured(settings: Settings) -> bool:
    from veille.settings import api_key_from_env  # here: settings imports this module

    return bool(settings.vertexai or settings.api_key_secret_block or api_key_from_env())


PROVIDERS: dict[str, Provider] = {
    "gemini": Provider(
        "gemini",
        "veille.models.gemini:GeminiModel",
        "Google Gemini (google-genai)",
        _gemini_configured,
        key_variables=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    ),
    "openai": Provider(
        "openai",
        "veille.models.openai_compat:OpenAICompatModel",
        "any OpenAI-compatible server: Ollama, vLLM, llama.cpp, OpenAI",
        uses_default_role_models=False,
        key_variables=("OPENAI_API_KEY",),
    ),
    "offline": Provider(
        "offline",
        "veille.backends:offline_backend",
        "deterministic offline engine (no model, no network)",
        version="veille.backends:offline_version",
        free=True,
    ),
}


def key_variables() -> tuple[str, ...]:
    """Every provider's key variables, in registry order."""
    return tuple(name for entry in PROVIDERS.values() for name in entry.key_variables)


def provider_names() -> tuple[str, ...]:
    """The registered providers, in registry order (``auto``'s order)."""
    return tuple(PROVIDERS)


def backend_choices() -> tuple[str, ...]:
    """What ``backend`` / ``--backend`` accepts: ``auto`` and every provider."""
    return (AUTO, *PROVIDERS)


def backend_help() -> str:
    """The ``--backend`` option's help, from the registry."""
    return f"{AUTO} (Gemini if a key is set, else offline) or a provider: " + ", ".join(
        f"{entry.name} ({entry.summary})" for entry in PROVIDERS.values()
    )


def check_backend(value: str | None) -> str | None:
    """``value`` when it is ``auto`` or a provider (``None``: not given); else an
    :class:`UnknownProviderError` naming the choices."""
    if value is not None and value not in backend_choices():
        raise UnknownProviderError(f"--backend {value!r}: expected one of {', '.join(backend_choices())}")
    return value


def provider(name: str) -> Provider:
    """The entry named ``name``; :class:`UnknownProviderError` listing the known ones."""
    try:
        return PROVIDERS[name]
    except KeyError:
        raise UnknownProviderError(
            f"unknown provider {name!r}; expected one of {', '.join(provider_names())}"
        ) from None


@contextmanager
def registered(entry: Provider) -> Iterator[str]:
    """Within this block, ``entry`` is a provider like the others, selected by its name (the
    ``backend`` setting or a role's ``provider``); its name is yielded. How a test hands a double
    to a night explicitly: nothing reads it unless the settings name it. A name already in the
    registry is refused: a double never shadows a real provider."""
    if entry.name in PROVIDERS or entry.name == AUTO:
        raise ValueError(f"provider {entry.name!r} is already registered")
    PROVIDERS[entry.name] = entry
    try:
        yield entry.name
    finally:
        if PROVIDERS.get(entry.name) is entry:
            del PROVIDERS[entry.name]


def _load(target: str | Callable[[Settings], object]) -> Callable[[Settings], object]:
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    loaded: Callable[[Settings], object] = getattr(importlib.import_module(module), attribute)
    return loaded


def build_provider(name: str, settings: Settings) -> Model:
    """The backend of provider ``name`` for ``settings`` (its key read now, never stored)."""
    built = _load(provider(name).factory)(settings)
    return built  # type: ignore[return-value]  # the factory's contract: a Model


def provider_version(name: str, settings: Settings) -> str:
    """The version of the code behind provider ``name``'s answers, without building it."""
    entry = provider(name)
    return "" if entry.version is None else str(_load(entry.version)(settings))


if TYPE_CHECKING:
    BackendChoice = str
else:
    # The flow's ``backend`` parameter as a Literal built from the registry, so the Prefect UI's
    # form shows the choices (a select, not a free text box) and a new provider adds its own —
    # without a provider's name written anywhere but the registry.
    BackendChoice = Literal[backend_choices()]
