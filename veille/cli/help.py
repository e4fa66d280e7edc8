"""What ``veille -h`` shows: plain metavars instead of Typer's ``<bool>``/``<str>`` type tags, and the
real value of a default that comes from the settings (the corpus and warehouse folders), resolved only
when help is printed.

Every command is tidied by :class:`VeilleGroup` as it is looked up, so a command module added later
(one ``register(app)`` per module) gets the same help without doing anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from typer import _click as click  # Typer ships its own click; its commands and options are these
from typer.core import TyperArgument, TyperGroup, TyperOption

__all__ = ["SETTING_DEFAULTS", "VeilleGroup", "package_version", "tidy_command"]

# An option whose default is None because the settings decide it: option name -> Settings field. Its help
# shows the folder the settings resolve to (environment, veille.toml, else the checkout), not a guess.
SETTING_DEFAULTS: Mapping[str, str] = {"corpus": "corpus_dir", "warehouse": "warehouse_dir"}
_TIDIED = "_veille_help_tidied"


def package_version() -> str:
    """The installed package's version (the wheel's or the editable checkout's metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("veille")
    except PackageNotFoundError:  # a source tree without metadata: say so rather than invent one
        return "unknown (not installed)"


_WORDS: Mapping[type, str] = {int: "INTEGER", float: "NUMBER", str: "TEXT"}


def _metavar(param: TyperOption) -> str:
    """What the value looks like: nothing for a flag, the choices, else a word for the value (PATH, TEXT,
    INTEGER) — not a Python type tag."""
    if param.is_flag or param.count:
        return ""
    desc = param.type_descriptor
    if desc.is_choice:
        return "|".join(str(choice) for choice in desc.choices or ())
    if desc.is_path:
        return "PATH"
    word = _WORDS.get(desc.annotation, "VALUE") if isinstance(desc.annotation, type) else "VALUE"
    return f"{word}..." if desc.is_list else word


def _setting_defaults() -> dict[str, str]:
    """The settings' values of :data:`SETTING_DEFAULTS`, or nothing when the settings cannot be read
    (help must still print; ``veille run`` then names the problem)."""
    try:
        from veille.settings import Settings

        settings = Settings.from_params()
    except Exception:  # any invalid setting: help is no place to report it
        return {}
    return {option: str(getattr(settings, field)) for option, field in SETTING_DEFAULTS.items()}


def _no_type(ctx: click.Context) -> None:
    return None


def _tidy_params(command: click.Command, ctx: click.Context) -> None:
    """Plain metavars for every option (``--help`` included), and the settings' folders as defaults."""
    params = command.get_params(ctx)
    for param in params:
        if isinstance(param, TyperOption) and param.metavar is None:
            param.metavar = _metavar(param)
        elif isinstance(param, TyperArgument):  # its name says what it is; no type column
            setattr(param, "display_type_rich", _no_type)  # noqa: B010  # this instance's help
    resolved = [
        p for p in params if isinstance(p, TyperOption) and p.name in SETTING_DEFAULTS and p.default is None
    ]
    values = _setting_defaults() if resolved else {}
    for param in resolved:
        if param.name in values:
            # Help is printed, then the command exits: this default is never used to run anything.
            param.default = values[param.name]


def _tidying_format_help(command: click.Command) -> Callable[..., None]:
    original = command.format_help

    def format_help(ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _tidy_params(command, ctx)  # here, not at start-up: reading the settings costs ~0.6 s
        original(ctx, formatter)

    return format_help


def tidy_command(command: click.Command) -> click.Command:
    """Make ``command``'s help (and, for a group, its commands' help) tidy when it is printed."""
    if getattr(command, _TIDIED, False):
        return command
    setattr(command, _TIDIED, True)
    setattr(command, "format_help", _tidying_format_help(command))  # noqa: B010  # this instance's help
    for sub in getattr(command, "commands", {}).values():
        tidy_command(sub)
    return command


class VeilleGroup(TyperGroup):
    """The ``veille`` group: each command it hands out is tidied (:func:`tidy_command`)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        return None if command is None else tidy_command(command)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _tidy_params(self, ctx)  # its own options (--help, --version)
        super().format_help(ctx, formatter)
