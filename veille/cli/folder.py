"""`veille init DIR` and `veille check`: a user's own folder, ready and checked before any night.

``init`` writes a request template in French (axes, options and period explained in comments that are
never read), an empty ``docs/`` and a commented ``delivery.toml``; it never overwrites a file.
``check`` lists every problem of a folder at once, each with its fix, and records nothing
(veille/run/check.py); its exit code is 1 when ``veille run`` would fail.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from veille.cli.run import CorpusOption, RequestOption, StrictOption, WarehouseOption, request_setting

if TYPE_CHECKING:
    from veille.run.check import FolderCheck

__all__ = ["TEMPLATES", "register", "template_text"]

# (file written by init, template in veille/cli/templates/)
TEMPLATES = (("demande.md", "demande.md"), ("delivery.toml", "delivery.toml"))


def template_text(name: str) -> str:
    """A bundled template's text (package data: works from a checkout and an installed wheel)."""
    return resources.files("veille.cli").joinpath("templates", name).read_text(encoding="utf-8")


def init(
    folder: Annotated[Path, typer.Argument(help="The folder to prepare (created if missing).")],
) -> None:
    """Prepare a folder for veille: a request template (demande.md), docs/ and a commented delivery.toml."""
    from veille.corpus.layout import DOCS_DIRNAME, find_request_files

    if folder.exists() and not folder.is_dir():
        typer.echo(
            f"error: {folder} is a file; expected a folder (or a path where one can be created)", err=True
        )
        raise typer.Exit(1)
    folder.mkdir(parents=True, exist_ok=True)
    existing = find_request_files(folder)
    for target, template in TEMPLATES:
        path = folder / target
        if target == "demande.md" and existing:  # a second request file would make the folder ambiguous
            typer.echo(f"kept     {existing[0]} (the request already there)")
        elif path.exists():
            typer.echo(f"kept     {path} (already there, not overwritten)")
        else:
            path.write_text(template_text(template), encoding="utf-8")
            typer.echo(f"created  {path}")
    docs = folder / DOCS_DIRNAME
    if docs.is_dir():
        typer.echo(f"kept     {docs}/")
    else:
        docs.mkdir()
        typer.echo(f"created  {docs}/")
    typer.echo(
        "\nNext: write your request in demande.md (plain text is enough), put the documents in docs/ "
        "(or beside demande.md), then:\n"
        f"  veille check --corpus {folder}\n"
        f"  veille run --corpus {folder}"
    )


def check(
    corpus: CorpusOption = None,
    request: RequestOption = None,
    strict: StrictOption = False,
    warehouse: WarehouseOption = None,
) -> None:
    """List every problem of a corpus folder at once, each with its fix; no run, nothing written.

    Exit code 1 when `veille run` would fail (an error), 0 otherwise (warnings say what a run would skip)."""
    from pydantic import ValidationError

    from veille.run.check import check_folder
    from veille.settings import Settings

    given = request_setting(request)
    try:
        settings = Settings.from_params(corpus=corpus, warehouse=warehouse, strict=strict, request=given)
    except ValidationError as exc:  # veille.toml or VEILLE_* variables: the run would refuse them too
        first = exc.errors()[0]
        typer.echo(f"error: invalid settings: {'.'.join(map(str, first['loc']))}: {first['msg']}", err=True)
        raise typer.Exit(1) from None
    found = check_folder(
        settings.corpus_dir,
        request=settings.request,
        strict=settings.strict,
        max_doc_bytes=settings.max_doc_bytes,
        warehouse_dir=settings.warehouse_dir,
    )
    typer.echo(f"Folder {settings.corpus_dir}")
    if found.request is not None:
        typer.echo(f"  request: {found.request_source} — « {found.request.title} »")
        if found.request.text == _template_request_text():
            found.add(
                "warning",
                str(found.request_source),
                "the request is still the template's example",
                "write your own request in place of the example",
            )
    for note in found.notes:
        typer.echo(f"  {note}")
    if found.request is not None and found.documents:
        typer.echo(f"  {_reading_line(found)}")
    for problem in found.problems:
        mark = "ERROR  " if problem.severity == "error" else "warning"
        typer.echo(f"{mark} {problem.where}: {problem.problem}\n        fix: {problem.fix}")
    errors, warnings = len(found.errors), len(found.problems) - len(found.errors)
    if errors:
        typer.echo(f"{errors} error(s), {warnings} warning(s): veille run would fail on this folder.")
        raise typer.Exit(1)
    typer.echo(f"No error, {warnings} warning(s): veille run --corpus {settings.corpus_dir} can run.")


def _template_request_text() -> str:
    from veille.corpus.request import parse_request_text

    return parse_request_text(template_text("demande.md"), Path("demande.md"))[0].text


def _reading_line(found: FolderCheck) -> str:
    """How the request reads against the documents (code's reading, as an offline run reads it)."""
    from veille.corpus.request_reading import read_request

    assert found.request is not None
    texts = [doc.body for _, doc in found.documents]
    dates = [doc.date.isoformat() for _, doc in found.documents if doc.date is not None]
    reading = read_request(
        found.request.text, texts, title=found.request.title, terms=found.request.terms, dates=dates
    )
    period = "none"
    if reading.period_start or reading.period_end:
        period = f"{reading.period_start or '…'} – {reading.period_end or '…'}"
    axes = "; ".join(a.title for a in reading.axes) or "none"
    options = ", ".join(reading.options) or "none"
    return f"request read as: {reading.kind}; options: {options}; period: {period}; axes ({len(reading.axes)}): {axes}"


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("init")(init)
    app.command("check")(check)
