"""One typed Settings object, built once at the entry point and passed down.

Sources, highest priority first: explicit keyword arguments, environment variables prefixed
``VEILLE_`` (nested with ``__``, e.g. ``VEILLE_ROLES__PLANNER__MODEL``), then an optional
``veille.toml`` in the working directory (or the file named by ``VEILLE_CONFIG``).
Secrets (the Gemini API key) are *not* settings fields: they are read from the environment
or a Prefect Secret block at the moment a client is built, so they never end up in a dump.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from veille.corpus_default import default_corpus
from veille.providers import AUTO, PROVIDERS, provider
from veille.resources import data_dir
from veille.roles.limits import Bounds

__all__ = [
    "PROJECT_ROOT",
    "RoleModel",
    "Settings",
    "api_key_from_env",
    "default_home",
]

# The repository root (editable install): the bundled corpus and the default warehouse live there.
# Configuration files ship in the package (veille/data, see veille.resources).
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def default_home(root: Path = PROJECT_ROOT) -> Path:
    """Folder of the default `corpus/` and `warehouse/data/`: the checkout when veille runs from one,
    else the working directory — an installed wheel's parent is site-packages, which is no place for
    a user's watch (and is often not writable); `veille.toml` is read from there too."""
    return root if (root / "pyproject.toml").is_file() else Path.cwd()


Role = Literal["planner", "analyst", "analyst_update", "writer", "critic", "reviser", "judge", "researcher"]
ROLES: tuple[Role, ...] = (
    "planner",
    "analyst",
    "analyst_update",
    "writer",
    "critic",
    "reviser",
    "judge",
    "researcher",
)
# A role whose settings follow another's unless it is configured itself: the incremental analyst
# reads like the analyst (same model, same thinking) unless told otherwise.
FOLLOWS: dict[str, str] = {"analyst_update": "analyst"}


class RoleModel(BaseModel):
    """Provider, model and thinking level for one LLM role."""

    # "" on a provider without default role models (openai): the provider's default model.
    model: str
    thinking: Literal["none", "low", "medium", "high"] = "low"
    temperature: float = 0.2
    # The registry name of the role's provider (veille/providers.py); None: the night's backend.
    provider: str | None = None

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str | None) -> str | None:
        if value is not None:
            provider(value)  # UnknownProviderError (a ValueError) lists the registry's names
        return value


class _DefaultRoles(dict[str, RoleModel]):
    """The default role table, told apart from a given one by its type: a role on a provider whose
    models are not these (openai) then gets that provider's default model (``_merge_roles``)."""


def _default_roles() -> dict[str, RoleModel]:
    # The planner gets the strongest model: it runs once and its mistakes cost every branch. The judge
    # is a different, stronger model than the critic, so the critic's blind spots are not graded twice.
    # gemini-2.5-* was scheduled for shutdown in 2026-10 (see veille/data/prices.toml for sources).
    return _DefaultRoles(
        {
            "planner": RoleModel(model="gemini-3.1-pro-preview", thinking="medium", temperature=0.1),
            "analyst": RoleModel(model="gemini-3.5-flash", thinking="low"),
            "analyst_update": RoleModel(model="gemini-3.5-flash", thinking="low"),  # follows the analyst
            "writer": RoleModel(model="gemini-3.5-flash", thinking="low"),
            "critic": RoleModel(model="gemini-3.5-flash", thinking="low", temperature=0.0),
            "reviser": RoleModel(model="gemini-3.5-flash", thinking="low"),
            "judge": RoleModel(model="gemini-3.1-pro-preview", thinking="low", temperature=0.0),
            # Web research (--web): Google Search grounding, billed per search query on Gemini 3
            # (prices.toml). Temperature 1.0 is what Google recommends for grounded answers.
            "researcher": RoleModel(model="gemini-3.5-flash", thinking="low", temperature=1.0),
        }
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="VEILLE_",
        env_nested_delimiter="__",
        toml_file="veille.toml",
        extra="forbid",
    )

    # --- paths ---
    corpus_dir: Path = Field(default_factory=lambda: default_corpus(default_home(), PROJECT_ROOT))
    warehouse_dir: Path = Field(default_factory=lambda: default_home() / "warehouse" / "data")
    db_path: Path | None = Field(
        default=None, description="DuckDB corpus database; default <warehouse_dir>/veille.duckdb"
    )
    # Folder of grid.toml, prices.toml, authority.toml: the bundled copy unless a config/ folder is given.
    config_dir: Path = data_dir()

    # --- ingestion ---
    strict: bool = False
    # A request file or its text (`veille run --request`); None: request.md or demande.md in the corpus.
    request: str | None = None
    max_doc_bytes: int = 1_048_576
    # A document with no date of its own (front matter, its file's properties, its text) is « date
    # inconnue »; true dates it by its file's modification time instead — the user's opt-in, since a
    # copy or a fresh clone gives every file the day it was made (docs/corpus-format.md, « Dates »).
    date_from_file_clock: bool = False

    # --- model layer ---
    # A provider of the registry (veille/providers.py) or "auto" (Gemini when configured, else offline).
    backend: str = AUTO
    # Validated even when not given: the merge below fills the defaults for the night's provider.
    roles: dict[str, RoleModel] = Field(default_factory=_default_roles, validate_default=True)
    vertexai: bool = False
    gcp_project: str | None = None
    gcp_location: str = "europe-west1"
    gemini_base_url: str | None = None  # tests point the real SDK at a loopback fake server
    gemini_api_version: str | None = None
    api_key_secret_block: str | None = Field(default=None, description="Prefect Secret block holding the key")
    request_timeout_ms: int = 60_000
    # The OpenAI-compatible provider (veille/models/openai_compat.py). Unset, the SDK's own
    # OPENAI_BASE_URL / OPENAI_API_KEY apply; the key is never a setting (like Gemini's).
    openai_base_url: str | None = None
    openai_model: str | None = Field(
        default=None, description="default model of the openai provider; unset: the first GET /models lists"
    )
    openai_api_key_secret_block: str | None = Field(
        default=None, description="Prefect Secret block holding the OpenAI-compatible server's key"
    )
    # Per model: how structured output is asked. "json_schema" (response_format with the role's
    # schema, strict) where the server enforces it; "json_object" (JSON mode, the schema in the
    # prompt, validated on arrival) where it does not. Models not listed: "json_schema".
    openai_output: dict[str, Literal["json_schema", "json_object"]] = Field(default_factory=dict)
    # Requests for one answer: the first plus http_attempts - 1 resends after transport failures,
    # shared by the whole logical call (veille/models/retry.py).
    http_attempts: int = 4
    # Backoff between resends (and the longest 429 wait honoured); tests make these tiny.
    http_retry_initial_delay_s: float = 1.0
    http_retry_max_delay_s: float = 60.0  # also the longest 429 retryDelay we are willing to wait
    reask_attempts: int = Field(default=2, ge=0)  # re-asks after a schema violation (so 3 attempts in all)
    # Model calls in flight per run. Unset, it follows the fan-out: max(6, max_subtasks), so every
    # analyst branch can wait on its model at once (a cap below max_subtasks serialises the tail).
    max_concurrent_calls: int = Field(default=6, ge=1, description="default: max(6, max_subtasks)")
    use_cache: bool = True

    # --- planning / analysis / review ---
    max_subtasks: int = Field(default=6, ge=1)
    max_docs: int = Field(default=8, ge=1)
    planner_sees_summaries: bool = True
    # Most tokens the planner input (instructions + prompt) may take; above it the catalogue step
    # collapses near-duplicates and shortlists by relevance to the request (veille/steps/catalogue.py).
    planner_token_budget: int = Field(default=8000, ge=1000)
    # Most tokens of document text one analyst call reads (docs/pipeline.md, "Reading within a
    # budget"): documents whole while they fit, else their sections most relevant to the sub-task's
    # question; the default comes from bench/analyst_budget.py (docs/benchmarks.md).
    analyst_token_budget: int = Field(
        default=10000, ge=500, description="tokens of document text per analyst call"
    )
    max_rounds: int = Field(default=3, ge=1)
    # The nightly watch (veille/steps/plan_reuse.py): up to this many new documents since the last
    # completed run, its plan is reused and code places them; more (or 0 to never reuse): re-plan.
    replan_after_new: int = Field(
        default=5, ge=0, description="new documents above which the planner is asked again"
    )
    # Web research (seed 004): one grounded call (Google Search) per sub-task, at most web_budget a run.
    web: bool = False
    web_budget: int = Field(default=6, ge=0, description="grounded calls per run at most")
    grid_path: Path | None = None  # default: <corpus>/grid.toml if present, else <config_dir>/grid.toml

    # --- bounds: what a model can make us write, and what a night may cost (issue 23) ---
    # USD a night may spend on model calls (every request's journaled cost, every process); past it
    # no request is sent and code finishes the night (veille/models/budget.py, docs/models.md).
    # None (given in code) disables it. The default is ~20× a bundled-corpus night on the fake Gemini
    # ($0.249, docs/benchmarks.md « Reading within a budget »).
    max_cost_usd: float | None = Field(default=5.0, gt=0, description="USD per night at most")
    # The most output tokens (thinking included) one request may take, whatever its schema allows
    # (veille/models/outcap.py): what the budget prices before a request leaves. A good analyst
    # answer (30 findings of 120 words) is ~6,000 tokens, a dossier fewer: 32,768 leaves room for
    # thinking and halves the reservation of Gemini's own 65,536.
    max_output_tokens: int = Field(default=32_768, ge=256, description="output tokens per request at most")
    # An analyst answer keeps its first max_findings_per_branch findings (the schema says so too);
    # a finding, key point or sentence over max_item_words words is dropped whole, never cut.
    max_findings_per_branch: int = Field(default=30, ge=1, description="findings kept per analyst answer")
    max_item_words: int = Field(default=120, ge=10, description="words per finding or dossier item")
    max_points_per_axis: int = Field(default=12, ge=1, description="key points kept per axis")
    # The report body's words at most, as a multiple of the grid's max_words: past it the last
    # items of the longest sections are dropped whole (veille/steps/bounds.py).
    report_words_factor: float = Field(default=2.0, ge=1.0, description="report words ≤ factor × max_words")

    # --- execution ---
    task_runner: Literal["threads", "dask"] = "threads"
    dask_address: str | None = None
    max_workers: int = 8
    # Without PREFECT_API_URL: "shared" starts one background Prefect API that consecutive runs use
    # and that stops after prefect_server_idle_s without a run (veille/ops/shared_api.py);
    # "temporary" starts Prefect's temporary API per run and stops it at exit (~5 s more a run).
    prefect_server: Literal["shared", "temporary"] = "shared"
    prefect_server_idle_s: float = Field(
        default=600.0, gt=0, description="seconds without a run before the shared Prefect API stops"
    )

    # --- warehouse ---
    query_timeout_s: float = Field(
        default=60.0, gt=0, description="`veille sql` and the API stop a query after this"
    )
    query_memory_limit: str = Field(
        default="1GB",
        pattern=r"^\d+(?:\.\d+)?\s*[KMGT]i?B$",
        description="DuckDB memory_limit of `veille sql`",
    )
    query_threads: int = Field(default=2, ge=1, le=64, description="DuckDB threads of `veille sql`")
    # quality.regression: judge score below the median of the previous completed runs of the corpus
    quality_window: int = Field(default=7, ge=1, description="previous completed runs of the median")
    quality_threshold: float = Field(default=0.1, ge=0, description="drop below the median that alerts")
    quality_min_runs: int = Field(default=3, ge=1, description="fewer previous runs: no verdict")

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value != AUTO:
            provider(value)  # UnknownProviderError (a ValueError) lists the registry's names
        return value

    @field_validator("roles", mode="before")
    @classmethod
    def _merge_roles(cls, value: Any, info: ValidationInfo) -> Any:
        """Overrides are merged per role and per field over the defaults, so
        ``VEILLE_ROLES__ANALYST__MODEL=x`` changes the analyst's model only (not every role).
        A role on a provider whose models are not the defaults' (openai) and given no model of
        its own gets "": that provider's default model, never a Gemini id it does not serve."""
        if not isinstance(value, dict):
            return value
        if isinstance(value, _DefaultRoles):
            value = {}  # nothing given: the defaults, for the night's provider
        merged: dict[str, dict[str, Any]] = {
            name: role.model_dump() for name, role in _default_roles().items()
        }
        given: dict[str, dict[str, Any]] = {}
        for name, override in value.items():
            if name not in ROLES:
                raise ValueError(f"roles: unknown role {name!r}; expected one of {', '.join(ROLES)}")
            fields = override.model_dump() if isinstance(override, RoleModel) else override
            if not isinstance(fields, dict):
                raise ValueError(f"roles.{name}: expected a table with model/thinking/temperature")
            given[name] = fields
        for name in ROLES:
            # A following role starts from its leader's merged settings, then takes its own fields.
            base = merged[FOLLOWS[name]] if name in FOLLOWS else merged[name]
            merged[name] = {**base, **given.get(name, {})}
        night = info.data.get("backend", AUTO)
        for name, fields in merged.items():
            chosen = fields.get("provider") or night
            own = given.get(name, {}) | (given.get(FOLLOWS[name], {}) if name in FOLLOWS else {})
            if chosen in PROVIDERS and not PROVIDERS[chosen].uses_default_role_models and "model" not in own:
                fields["model"] = ""
        return merged

    @model_validator(mode="after")
    def _cap_follows_the_fan_out(self) -> Settings:
        if "max_concurrent_calls" not in self.model_fields_set:
            # Through __dict__: a derived default must not count as explicitly set (dumps, copies).
            self.__dict__["max_concurrent_calls"] = max(self.max_concurrent_calls, self.max_subtasks)
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = Path(os.environ.get("VEILLE_CONFIG", "veille.toml"))
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=toml_path),
        )

    # --- derived paths ---
    @property
    def database(self) -> Path:
        return self.db_path or self.warehouse_dir / "veille.duckdb"

    @property
    def runs_dir(self) -> Path:
        return self.warehouse_dir / "runs"

    @property
    def cache_dir(self) -> Path:
        return self.warehouse_dir / "cache"

    @property
    def parquet_dir(self) -> Path:
        return self.warehouse_dir / "parquet"

    @property
    def grid_file(self) -> Path:
        if self.grid_path is not None:
            return self.grid_path
        per_corpus = self.corpus_dir / "grid.toml"
        return per_corpus if per_corpus.exists() else self.config_dir / "grid.toml"

    @property
    def prices_file(self) -> Path:
        return self.config_dir / "prices.toml"

    @property
    def authority_file(self) -> Path:
        return self.config_dir / "authority.toml"

    @classmethod
    def from_params(
        cls,
        *,
        corpus: str | Path | None = None,
        warehouse: str | Path | None = None,
        backend: str | None = None,
        strict: bool = False,
        max_rounds: int | None = None,
        use_cache: bool | None = None,
        web: bool = False,
        **fields: Any,
    ) -> Settings:
        """The one constructor: explicit parameters (the CLI's options, a deployment's parameters)
        over ``VEILLE_*`` environment over veille.toml. ``None`` means "not given"; ``strict=False``
        means "not forced" (VEILLE_STRICT=true still applies). Values are checked by pydantic, so a bad
        parameter is a ValidationError naming the field. ``web=False`` likewise means "not forced"
        (VEILLE_WEB=true still applies)."""
        overrides: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
        if corpus is not None:
            overrides["corpus_dir"] = Path(corpus).expanduser().resolve()
        if warehouse is not None:
            overrides["warehouse_dir"] = Path(warehouse).expanduser().resolve()
        given = {"backend": backend, "max_rounds": max_rounds, "use_cache": use_cache}
        overrides.update({k: v for k, v in given.items() if v is not None})
        if strict:
            overrides["strict"] = True
        if web:
            overrides["web"] = True
        return cls(**overrides)

    def bounds(self) -> Bounds:
        """Code's bounds on what a model makes us write (veille.roles.limits.Bounds)."""
        return Bounds(
            max_findings=self.max_findings_per_branch,
            max_item_words=self.max_item_words,
            max_points_per_axis=self.max_points_per_axis,
            report_words_factor=self.report_words_factor,
        )

    def role(self, name: str) -> RoleModel:
        return self.roles[name]

    def resolved_backend(self) -> str:
        """The night's provider: ``backend``, or for ``auto`` the first provider of the registry
        that says it is configured (Gemini with a key, Vertex AI or a secret block), else offline."""
        if self.backend != AUTO:
            return self.backend
        for entry in PROVIDERS.values():
            if entry.configured is not None and entry.configured(self):
                return entry.name
        return "offline"

    def role_provider(self, role: str) -> str:
        """The provider that answers ``role``: its own (``roles.<role>.provider``) or the night's."""
        return self.roles[role].provider or self.resolved_backend()


def api_key_from_env() -> str | None:
    """The Gemini key, as the SDK would pick it (GOOGLE_API_KEY wins over GEMINI_API_KEY)."""
    return os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY") or None
