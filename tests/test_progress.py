"""Progress on the console (issue 39 item 4): ingestion, analysis and review report how far they
are (veille.progress), and `veille run` draws them as rich bars on a terminal only."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from veille import progress
from veille.cli.progress import showing_progress
from veille.store.ingest import ingest_corpus

MINI = Path(__file__).parent / "fixtures" / "mini_corpus"


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    shutil.copytree(MINI, corpus)
    return corpus


def _watching() -> tuple[list[progress.Progress], Callable[[], None]]:
    seen: list[progress.Progress] = []
    return seen, progress.watch(seen.append)


def test_ingestion_reports_every_file_and_each_batch_write(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    files = len(list((corpus / "docs").glob("*.md")))
    seen, stop = _watching()
    try:
        ingest_corpus(corpus, tmp_path / "v.duckdb", batch_size=2)
    finally:
        stop()
    events = [e for e in seen if e.stage == "ingest"]
    assert [e.done for e in events] == list(range(1, files + 1))
    assert {e.total for e in events} == {files}
    writes = [e.done for e in events if e.note == "écriture"]
    assert writes == sorted({*range(2, files + 1, 2), files})  # the last of every batch, then written


def test_without_an_observer_nothing_is_counted(tmp_path: Path) -> None:
    progress.report("ingest", 1, 2)
    progress.advance("analyse")
    seen, stop = _watching()
    progress.advance("analyse")
    stop()
    assert [(e.done, e.total) for e in seen] == [(1, None)]


@pytest.mark.usefixtures("prefect_harness")
def test_a_run_reports_ingestion_analysis_and_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from veille.flows.veille import veille_flow

    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    seen, stop = _watching()
    try:
        state = veille_flow(corpus=str(_corpus(tmp_path)), backend="offline", return_state=True)
    finally:
        stop()
    assert state.is_completed(), state.message
    run_dir = Path(str(state.result()))
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    rounds = json.loads((run_dir / "review.json").read_text(encoding="utf-8"))["rounds"]
    stages = list(dict.fromkeys(e.stage for e in seen))
    assert stages == ["ingest", "analyse", "review"]
    analyse = [e for e in seen if e.stage == "analyse"]
    assert analyse[0].done == 0 and analyse[-1].done == analyse[-1].total == len(plan["sub_tasks"])
    review = [e for e in seen if e.stage == "review"]
    assert review[-1].done == review[-1].total == len(rounds)


def test_bars_are_drawn_on_a_terminal_only() -> None:
    for terminal in (True, False):
        out = io.StringIO()
        console = Console(file=out, force_terminal=terminal, width=100)
        with showing_progress(console) as drawn:
            progress.report("ingest", 3, 4)
            progress.report("analyse", 0, 2)
            progress.advance("analyse")
        assert drawn is terminal
        text = out.getvalue()
        assert ("Ingestion" in text and "Analyse" in text and "1/2" in text) is terminal, text
    assert progress._observers == []  # nobody is left watching once the bars are gone


def test_a_note_naming_a_file_is_drawn_as_written_never_as_a_style() -> None:
    """A note names files and branches (data): « [bold]notes[/bold].md » is printed with its brackets,
    and « [old] » (no style rich knows) neither breaks the bars nor disappears."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    with showing_progress(console) as drawn:
        progress.report("ingest", 1, 2, note="[bold]notes[/bold].md")
        progress.report("ingest", 2, 2, note="[old] rapport.md")
    assert drawn
    text = out.getvalue()
    assert "[bold]notes[/bold].md" in text and "[old] rapport.md" in text, text
