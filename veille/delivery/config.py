"""``<corpus>/delivery.toml``: who receives the corpus's dossier after each night (optional).

Recipients are data; secrets are not: a channel names the environment variable that holds its
Apprise URL (SMTP server with its credentials, chat webhook with its token), never the URL itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from veille.secrets import register_secret, url_password
from veille.tomlconfig import load_toml_model

__all__ = [
    "DELIVERY_FILE",
    "ChatChannel",
    "DeliveryConfig",
    "DeliveryError",
    "EmailChannel",
    "Operators",
    "load_delivery",
    "register_delivery_secrets",
]

DELIVERY_FILE = "delivery.toml"
_ENV_RE = re.compile(r"[A-Z][A-Z0-9_]*")
_EMAIL_RE = re.compile(r"[^@\s,;<>\"']+@[^@\s,;<>\"']+\.[^@\s,;<>\"']+")
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")


class DeliveryError(ValueError):
    """``delivery.toml`` is not TOML or has an invalid field (the message names both)."""


def _env_name(value: str) -> str:
    # The value is not repeated: a URL pasted here by mistake may hold a password.
    if not _ENV_RE.fullmatch(value):
        raise ValueError("expected the NAME of an environment variable (A-Z, 0-9, _), not its value")
    return value


def _addresses(value: list[str]) -> list[str]:
    bad = [v for v in value if not _EMAIL_RE.fullmatch(v)]
    if bad:
        raise ValueError(f"expected e-mail addresses such as equipe@example.org, got {bad}")
    return value


class EmailChannel(BaseModel):
    """The dossier as an e-mail: HTML body, report.md attached."""

    model_config = ConfigDict(extra="forbid")

    to: list[str] = Field(min_length=1)
    server_env: str = "VEILLE_SMTP_URL"  # Apprise mailto:// or mailtos:// URL, credentials included

    @field_validator("to")
    @classmethod
    def _to(cls, value: list[str]) -> list[str]:
        return _addresses(value)

    @field_validator("server_env")
    @classmethod
    def _server_env(cls, value: str) -> str:
        return _env_name(value)


class ChatChannel(BaseModel):
    """A chat message (synthesis, Nouveautés, link) through an Apprise URL: slack://, msteams://,
    mmost://, json:// (generic webhook)…"""

    model_config = ConfigDict(extra="forbid")

    name: str
    url_env: str

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME_RE.fullmatch(value):
            raise ValueError(f"expected a name of lowercase letters, digits, '.', '_' or '-', got {value!r}")
        return value

    @field_validator("url_env")
    @classmethod
    def _url_env(cls, value: str) -> str:
        return _env_name(value)


class Operators(BaseModel):
    """Who is told that a night failed (``veille setup``'s failure automation): the people who can
    rerun it, never the readers of the dossier, who get the partial dossier marked partial."""

    model_config = ConfigDict(extra="forbid")

    to: list[str] = Field(default_factory=list)  # e-mail addresses, through server_env
    server_env: str = "VEILLE_SMTP_URL"
    chat: list[ChatChannel] = Field(default_factory=list)

    @field_validator("to")
    @classmethod
    def _to(cls, value: list[str]) -> list[str]:
        return _addresses(value)

    @field_validator("server_env")
    @classmethod
    def _server_env(cls, value: str) -> str:
        return _env_name(value)

    @model_validator(mode="after")
    def _someone(self) -> Operators:
        if not self.to and not self.chat:
            raise ValueError("expected at least one operator: `to` addresses or a [[operators.chat]] channel")
        return self


class DeliveryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Link in chat messages; {run_id} is replaced. Default: the flow run in the Prefect UI when
    # PREFECT_UI_URL is set, else the report's path on the worker.
    link: str | None = None
    email: EmailChannel | None = None
    chat: list[ChatChannel] = Field(default_factory=list)
    # Optional (configs written before it stay valid): without it a failed night notifies nobody.
    operators: Operators | None = None


def load_delivery(corpus_dir: Path) -> DeliveryConfig | None:
    """The corpus's delivery configuration, or None when it has no ``delivery.toml``."""
    path = corpus_dir / DELIVERY_FILE
    if not path.exists():
        return None
    return load_toml_model(
        path,
        DeliveryConfig,
        error=DeliveryError,
        what="delivery",
        expected="[email], [[chat]] and [operators] tables",
    )


def register_delivery_secrets(corpus_dir: Path, environ: Mapping[str, str]) -> int:
    """Mask the corpus's delivery URLs (whole: a webhook's token sits in its path) and their
    passwords in everything the run writes, from its first line (veille.secrets.register_secret).
    An unreadable delivery.toml registers nothing: the delivery step reports it. Returns how many."""
    try:
        config = load_delivery(corpus_dir)
    except DeliveryError:
        return 0
    if config is None:
        return 0
    variables = [config.email.server_env] if config.email is not None else []
    variables += [c.url_env for c in config.chat]
    if config.operators is not None:
        variables += [config.operators.server_env, *(c.url_env for c in config.operators.chat)]
    urls = [environ.get(v, "").strip() for v in variables]
    for url in filter(None, urls):
        register_secret(url)
        register_secret(url_password(url))  # alone too: an error may quote it without the URL
    return sum(1 for u in urls if u)
