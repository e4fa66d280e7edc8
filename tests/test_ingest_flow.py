"""The ingest flow (through prefect_test_harness), the task wrappers and the CLI commands."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests.fixtures.corpus_factory import copy_mini_corpus, doc_text
from veille.cli import run as cli_run
from veille.corpus.errors import StrictModeError
from veille.flows.ingest import ingest_flow
from veille.settings import Settings
from veille.store.readers import read_catalogue
from veille.tasks.ingest import catalogue, ingest


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


def test_the_ingest_log_is_bounded_per_code(
    corpus: Path, warehouse_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """300 invalid files and 300 noted ones: the task's log names the first few of each code and says
    how many more, instead of one line per document (the log is a view too, issue 29 item 5)."""
    docs = corpus / "docs"
    for i in range(300):
        (docs / f"bad-{i:03d}.md").write_text(doc_text(f"bad-{i:03d}", date='"2025-13-45"'), encoding="utf-8")
        (docs / f"note-{i:03d}.md").write_text(
            doc_text(f"note-{i:03d}", title="Kestrel: note", extra="tags: [a]\n"), encoding="utf-8"
        )
    settings = Settings(corpus_dir=corpus, warehouse_dir=warehouse_dir)
    with caplog.at_level("INFO", logger="veille.tasks.ingest"):
        report = ingest.fn(settings)
    assert (report.skipped, report.documents) == (300, 304)
    lines = [r.getMessage() for r in caplog.records if r.name == "veille.tasks.ingest"]
    invalid = [line for line in lines if line.startswith("ingest.invalid_document:")]
    notes = [line for line in lines if line.startswith("ingest.document_note:")]
    assert len(invalid) == 25 + 1 and invalid[-1].startswith(
        "ingest.invalid_document: 275 more of this code, 300"
    )
    assert len(notes) == 2 + 1 and notes[-1].startswith("ingest.document_note: 298 more of this code, 300")
    assert len(lines) < 40


def test_ingest_flow(prefect_harness: None, corpus: Path, warehouse_dir: Path) -> None:
    report = ingest_flow(corpus=str(corpus), warehouse=str(warehouse_dir))
    assert (report.added, report.documents) == (4, 4)
    assert (warehouse_dir / "veille.duckdb").is_file()
    again = ingest_flow(corpus=str(corpus), warehouse=str(warehouse_dir))
    assert (again.added, again.unchanged) == (0, 4)


def test_ingest_flow_strict_failure(prefect_harness: None, corpus: Path, warehouse_dir: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", date='"2026-13-01"'), encoding="utf-8")
    settings = Settings(corpus_dir=corpus, warehouse_dir=warehouse_dir, strict=True)
    with pytest.raises(StrictModeError, match=r"doc-05\.md : champ 'date' : "):
        ingest_flow(settings=settings)


def test_cli_ingest_and_catalogue(corpus: Path, warehouse_dir: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", body=""), encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(make_app(), ["ingest", "--corpus", str(corpus), "--warehouse", str(warehouse_dir)])
    assert result.exit_code == 0, result.output
    assert "4 ajouté(s)" in result.output and "1 invalide(s) ignoré(s)" in result.output
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
    assert "doc-05.md : champ 'body' : le corps du document est vide" in result.output
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
    assert "error: " in result.output and "dossier de corpus introuvable" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["run", "ingest", "catalogue"])
def test_every_command_has_help(command: str) -> None:
    result = CliRunner().invoke(make_app(), [command, "--help"])
    assert result.exit_code == 0
    assert "--warehouse" in result.output


def test_veille_run_prints_the_ingest_alerts_once(corpus: Path, warehouse_dir: Path, tmp_path: Path) -> None:
    """`veille run` printed each ingest alert twice (the ingestion block, then the run's alerts): when
    the run's alerts.json holds them, the ingestion block counts them; else it lists them itself."""
    import json

    from rich.console import Console

    from veille.run.summary import ingest_alerts_recorded

    for i in range(30):
        (corpus / "docs" / f"bad-{i:02d}.md").write_text(
            doc_text(f"bad-{i:02d}", date='"x"'), encoding="utf-8"
        )
    report = ingest.fn(Settings(corpus_dir=corpus, warehouse_dir=warehouse_dir))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assert not ingest_alerts_recorded(run_dir, report)  # no alerts.json: the run stopped early
    (run_dir / "alerts.json").write_text(
        json.dumps([a.model_dump() for a in report.alerts[:-1]]), encoding="utf-8"
    )
    assert not ingest_alerts_recorded(run_dir, report)  # one missing
    (run_dir / "alerts.json").write_text(
        json.dumps([a.model_dump() for a in report.alerts]), encoding="utf-8"
    )
    assert ingest_alerts_recorded(run_dir, report)
    for below, expected in ((False, 25), (True, 0)):
        console = Console(record=True, width=200)
        cli_run.print_ingest_summary(report, None, console, alerts_below=below)
        text = console.export_text()
        assert text.count("bad-") == expected + (3 if not below else 0), text  # + the code line's subjects
        # Printed once: with the run's list below, the ingest summary has no alert line at all.
        assert ("Alertes" in text) is not below and "Alerts" not in text
