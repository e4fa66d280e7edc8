"""The ingest flow (through prefect_test_harness), the task wrappers and the CLI commands."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from flows.ingest import ingest_flow
from tasks.ingest import catalogue, ingest
from tests.fixtures.corpus_factory import copy_mini_corpus, doc_text
from veille.cli import run as cli_run
from veille.corpus.errors import StrictModeError
from veille.settings import Settings
from veille.store.readers import read_catalogue


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return copy_mini_corpus(tmp_path / "corpus")


def make_app() -> typer.Typer:
    app = typer.Typer()
    cli_run.register(app)
    return app


def test_tasks_without_a_run_context(corpus: Path, warehouse_dir: Path) -> None:
    settings = Settings(corpus_dir=corpus, warehouse_dir=warehouse_dir, planner_sees_summaries=False)
    report = ingest.fn(settings)
    assert report.added == 4
    listing = catalogue.fn(settings)
    assert len(listing.entries) == 4 and " — " not in listing.text


def test_ingest_flow(prefect_harness: None, corpus: Path, warehouse_dir: Path) -> None:
    report = ingest_flow(corpus=str(corpus), warehouse=str(warehouse_dir))
    assert (report.added, report.documents) == (4, 4)
    assert (warehouse_dir / "veille.duckdb").is_file()
    again = ingest_flow(corpus=str(corpus), warehouse=str(warehouse_dir))
    assert (again.added, again.unchanged) == (0, 4)


def test_ingest_flow_strict_failure(prefect_harness: None, corpus: Path, warehouse_dir: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", date='"2026-13-01"'), encoding="utf-8")
    settings = Settings(corpus_dir=corpus, warehouse_dir=warehouse_dir, strict=True)
    with pytest.raises(StrictModeError, match=r"doc-05\.md: field 'date'"):
        ingest_flow(settings=settings)


def test_cli_ingest_and_catalogue(corpus: Path, warehouse_dir: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", body=""), encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(make_app(), ["ingest", "--corpus", str(corpus), "--warehouse", str(warehouse_dir)])
    assert result.exit_code == 0, result.output
    assert "added 4" in result.output and "skipped 1 invalid" in result.output
    assert "ingest.invalid_document" in result.output and "doc-05.md" in result.output

    result = runner.invoke(make_app(), ["catalogue", "--warehouse", str(warehouse_dir), "--summaries"])
    assert result.exit_code == 0, result.output
    assert (
        "doc-01 | 2026-02-10 | fiche-fournisseur | Tamaris 5 : fiche produit — L'éditeur annonce"
        in result.output
    )


def test_cli_bad_input_is_one_line_without_traceback(corpus: Path, warehouse_dir: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", body=""), encoding="utf-8")
    runner = CliRunner()
    args = ["ingest", "--corpus", str(corpus), "--warehouse", str(warehouse_dir), "--strict"]
    result = runner.invoke(make_app(), args)
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert "doc-05.md: field 'body': document body is empty" in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert read_catalogue(warehouse_dir / "veille.duckdb").entries == []  # nothing committed

    result = runner.invoke(make_app(), ["catalogue", "--warehouse", str(warehouse_dir / "none")])
    assert result.exit_code == 1 and result.output.startswith("error: no corpus database")


def test_cli_environment_errors_are_one_line_naming_the_path(
    corpus: Path, warehouse_dir: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x", encoding="utf-8")
    result = runner.invoke(make_app(), ["ingest", "--corpus", str(corpus), "--warehouse", str(a_file / "w")])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("error: ") and str(a_file) in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1

    warehouse_dir.mkdir(parents=True, exist_ok=True)
    (warehouse_dir / "veille.duckdb").write_bytes(b"this is not a database" * 100)
    result = runner.invoke(make_app(), ["catalogue", "--warehouse", str(warehouse_dir)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("error: ") and "veille.duckdb" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_cli_run_missing_corpus(prefect_harness: None, tmp_path: Path, warehouse_dir: Path) -> None:
    args = ["run", "--corpus", str(tmp_path / "nope"), "--warehouse", str(warehouse_dir)]
    result = CliRunner().invoke(make_app(), args)
    assert result.exit_code == 2
    assert "error: " in result.output and "corpus folder not found" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["run", "ingest", "catalogue"])
def test_every_command_has_help(command: str) -> None:
    result = CliRunner().invoke(make_app(), [command, "--help"])
    assert result.exit_code == 0
    assert "--warehouse" in result.output
