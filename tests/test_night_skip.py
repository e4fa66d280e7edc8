"""The whole-night skip (issue 40 item 4): a night reuses the last completed night's dossier only when
every input of the steps it skips is unchanged and that night's files are intact (veille.run.nightkey,
veille.run.nightskip). Each input is changed in turn, on disk where the flow reads it from disk."""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.alerts import alert
from veille.backends import backend_version
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint
from veille.roles.writer import SourceRef
from veille.run.inputs import corpus_inputs
from veille.run.nightkey import code_tree_digest, never_skip, night_key
from veille.run.nightskip import (
    NIGHT_FILE,
    REUSED_FILES,
    carried_alerts,
    carried_grades,
    kept_night,
    night_record,
    render_basis,
)
from veille.settings import Settings
from veille.steps.news import compare_snapshots, previous_dossier
from veille.tasks.ingest import catalogue, ingest

CORPUS = Path(__file__).resolve().parent / "corpora" / "clients-http"
PREVIOUS = "20261201T000000Z-abcdef"


@dataclass(frozen=True)
class Night:
    """What the flow hands the key: the settings and what ingestion read from the corpus folder."""

    corpus: Path
    settings: Settings
    backends: dict[str, str]
    code: str

    def key(self) -> str:
        ingest.fn(self.settings)  # the flow's own ingest and catalogue steps, outside a run
        listing = catalogue.fn(self.settings)
        inputs = corpus_inputs(self.settings)
        return night_key(
            settings=self.settings,
            snapshot=inputs.snapshot,
            catalogue=listing,
            request=inputs.request,
            reference=inputs.reference,
            grid=inputs.grid,
            backends=self.backends,
            code=self.code,
        )


@functools.cache
def _installed_code() -> str:
    """The installed package's digest, computed once: no test here edits that tree (``_code_edit``
    edits a copy), so each night would compute the same value again."""
    return code_tree_digest()


def _night(root: Path, **params: Any) -> Night:
    corpus = root / "corpus"
    if not corpus.exists():
        shutil.copytree(CORPUS, corpus)
    config = Settings.from_params(corpus=str(corpus), backend="offline", warehouse=str(root / "wh"), **params)
    backends = {config.role_provider(r): backend_version(config, r) for r in config.roles}
    return Night(corpus, config, backends, _installed_code())


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(text)


def _doc(night: Night, i: int) -> Path:
    docs = sorted((night.corpus / "docs").iterdir())
    return docs[i % len(docs)]


def _settings(night: Night, **update: Any) -> Night:
    return replace(night, settings=night.settings.model_copy(update=update))


def _role_model(night: Night, i: int) -> Night:
    role = sorted(night.settings.roles)[i % len(night.settings.roles)]
    roles = dict(night.settings.roles)
    roles[role] = roles[role].model_copy(update={"temperature": roles[role].temperature + 0.1})
    return _settings(night, roles=roles)


def _code_edit(night: Night, i: int) -> Night:
    """A copy of the package with one source or data file edited: the tree's digest changes."""
    package = Path(code_tree_digest.__code__.co_filename).resolve().parents[1]
    copy = night.corpus.parent / "pkg" / "veille"
    if not copy.exists():
        shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    files = sorted(p for p in copy.rglob("*") if p.is_file() and p.suffix in (".py", ".toml", ".sql"))
    _append(files[i % len(files)], "\n# édité\n")
    return replace(night, code=code_tree_digest(copy))


def _backend_version(night: Night, i: int) -> Night:
    """The offline engine's version: its code, data or authority file (veille.backends)."""
    name = sorted(night.backends)[i % len(night.backends)]
    return replace(night, backends={**night.backends, name: night.backends[name] + "+edited"})


# Each edit changes one input of the skipped steps and nothing else.
EDITS: dict[str, Callable[[Night, int], Night]] = {
    "document body": lambda n, i: (_append(_doc(n, i), "\n\nUne phrase de plus sur le débit mesuré.\n"), n)[
        1
    ],
    "document added": lambda n, i: (
        (n.corpus / "docs" / f"doc-new-{i}.md").write_text(
            "# Nouveau\n\nLe débit de httpx est de 40 Mo/s.\n"
        ),
        n,
    )[1],
    "document removed": lambda n, i: (_doc(n, i).unlink(), n)[1],
    "request": lambda n, i: (_append(n.corpus / "request.md", "\nPréciser le coût.\n"), n)[1],
    "reference dossier": lambda n, i: (
        _append(n.corpus / "reference" / "dossier.md", f"\n\nLe débit mesuré est de {i} Mo/s.\n"),
        n,
    )[1],
    "delivery.toml": lambda n, i: ((n.corpus / "delivery.toml").write_text(f"# {i}\n"), n)[1],
    "grid.toml": lambda n, i: (
        (n.corpus / "grid.toml").write_text(
            (n.settings.config_dir / "grid.toml").read_text(encoding="utf-8") + f"\n# {i}\n"
        ),
        n,
    )[1],
    "max_rounds": lambda n, i: _settings(n, max_rounds=n.settings.max_rounds + 1 + i % 3),
    "max_docs": lambda n, i: _settings(n, max_docs=n.settings.max_docs + 1 + i % 3),
    "report bounds": lambda n, i: _settings(n, max_item_words=n.settings.max_item_words + 1 + i),
    "analyst budget": lambda n, i: _settings(n, analyst_token_budget=n.settings.analyst_token_budget + 1 + i),
    "backend": lambda n, i: _settings(n, backend="gemini"),
    "a role's model settings": _role_model,
    "date from file clock": lambda n, i: _settings(n, date_from_file_clock=True),
    "a backend's version": _backend_version,
    "code or data file": _code_edit,
}


def _previous(runs: Path, key: str) -> Path:
    """A completed night recorded with ``key`` under ``runs``: its files, run.json and night.json."""
    folder = runs / PREVIOUS
    folder.mkdir(parents=True, exist_ok=True)
    for name in REUSED_FILES:
        (folder / name).write_text(json.dumps({"file": name}) if name.endswith(".json") else "# Dossier\n")
    (folder / "run.json").write_text(json.dumps({"run_id": PREVIOUS, "status": "completed"}))
    dossier = Dossier(
        synthesis=[CitedText(text="Httpx mène.", citations=[1])],
        sections=[AxisSection(axis="st-1", points=[KeyPoint(text="Débit de 40 Mo/s.", citations=[1])])],
    )
    source = SourceRef(number=1, id="doc-01", title="Banc", date="2026-01-01", source_type="benchmark")
    night_record(folder, key, render_basis("Clients HTTP", dossier, [source], {"st-1": "Débit"}, []))
    return folder


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(edit=st.sampled_from(sorted(EDITS)), i=st.integers(0, 50))
def test_an_unchanged_key_reuses_the_night_and_any_changed_input_runs_every_step(edit: str, i: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        night = _night(root)
        key = night.key()
        _previous(night.settings.runs_dir, key)
        assert night.key() == key  # an unchanged night: the same key, from the same reads
        kept = kept_night(night.settings.runs_dir, PREVIOUS, key)  # key: as the line above computes it
        assert kept is not None and kept.run_id == PREVIOUS
        # Each key() call ingests and reads the corpus again: computed once per night, not per use.
        changed = EDITS[edit](night, i).key()
        assert changed != key, edit
        assert kept_night(night.settings.runs_dir, PREVIOUS, changed) is None


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Night, str]:
    root = tmp_path_factory.mktemp("night")
    night = _night(root)
    return night, night.key()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from([*REUSED_FILES, NIGHT_FILE, "run.json"]), how=st.sampled_from(["truncate", "remove"])
)
def test_a_previous_night_with_a_file_changed_or_missing_is_not_reused(
    recorded: tuple[Night, str], name: str, how: str
) -> None:
    _, key = recorded
    with tempfile.TemporaryDirectory() as tmp:
        folder = _previous(Path(tmp) / "runs", key)
        assert kept_night(Path(tmp) / "runs", PREVIOUS, key) is not None
        target = folder / name
        if how == "remove":
            target.unlink()
        else:  # cut short, as a disk full or a killed copy leaves it
            data = target.read_bytes()
            target.write_bytes(data[: len(data) // 2])
        assert kept_night(Path(tmp) / "runs", PREVIOUS, key) is None


def test_a_failed_previous_night_or_another_run_id_is_not_reused(
    recorded: tuple[Night, str], tmp_path: Path
) -> None:
    _, key = recorded
    folder = _previous(tmp_path / "runs", key)
    assert kept_night(tmp_path / "runs", PREVIOUS, key) is not None
    assert kept_night(tmp_path / "runs", PREVIOUS, key + "0") is None
    (folder / "run.json").write_text(json.dumps({"run_id": PREVIOUS, "status": "failed"}))
    assert kept_night(tmp_path / "runs", PREVIOUS, key) is None
    shutil.copytree(folder, tmp_path / "runs" / "20261202T000000Z-123456")
    assert kept_night(tmp_path / "runs", "20261202T000000Z-123456", key) is None  # night.json names its run


@given(
    web=st.booleans(),
    use_cache=st.booleans(),
    drill=st.lists(st.sampled_from(["st-1", "st-2"]), max_size=2),
    attempt=st.integers(1, 3),
)
def test_web_no_cache_drills_and_retries_never_skip(
    web: bool, use_cache: bool, drill: list[str], attempt: int
) -> None:
    config = Settings(web=web, use_cache=use_cache)
    may_skip = not web and use_cache and not drill and attempt == 1
    assert (never_skip(config, drill, attempt) is None) == may_skip


def test_only_the_alerts_that_still_describe_the_corpus_or_the_dossier_are_carried() -> None:
    kept = [
        alert("screen", "injection.suspected", "doc-38 : injection", subject="doc-38"),
        alert("plan", "plan.reused", "plan du dossier précédent repris"),
        alert("plan", "plan.low_coverage", "couverture faible", severity="error"),
        alert("review", "review.critic_failed", "critique en échec"),
        alert("delivery", "delivery.failed", "envoi en échec"),
        alert("run", "run.night_reused", "nuit inchangée"),
    ]
    carried = carried_alerts([a.model_dump() for a in kept])
    assert [a.code for a in carried] == ["injection.suspected", "plan.low_coverage"]
    assert carried[0] == kept[0]


def test_carried_grades_are_marked_and_keep_the_night_that_graded_them() -> None:
    grades = [
        {"grader": "judge", "target": "final", "score": 0.8, "details": {"x": 1}, "carried_over": False},
        {
            "grader": "judge",
            "target": "part:a",
            "score": 0.7,
            "details": {"from_run": "r0"},
            "carried_over": True,
        },
        {"grader": "rouge_l", "target": "final", "score": 0.3, "details": None, "carried_over": False},
    ]
    out = carried_grades(grades, "r1")
    assert all(g["carried_over"] and g["details"]["carried_over"] for g in out)
    assert [g["details"]["from_run"] for g in out] == ["r1", "r0", "r1"]
    assert [g["score"] for g in out] == [0.8, 0.7, 0.3]


def test_the_kept_dossier_is_rendered_again_with_tonights_news(
    recorded: tuple[Night, str], tmp_path: Path
) -> None:
    _, key = recorded
    _previous(tmp_path / "runs", key)
    kept = kept_night(tmp_path / "runs", PREVIOUS, key)
    assert kept is not None
    previous = previous_dossier(PREVIOUS, date(2026, 12, 1), {"doc-01": "h"}, "", [])
    final = kept.final(compare_snapshots(previous, [("doc-01", "h")]))
    assert final.markdown.startswith("# Clients HTTP\n")
    assert f"(exécution {PREVIOUS}) : 0 document(s) nouveau(x), 0 modifié(s), 0 retiré(s)" in final.markdown
    assert "Débit de 40 Mo/s. [1]" in final.markdown and [s.id for s in final.sources] == ["doc-01"]


def test_a_document_dated_by_its_file_clock_changes_the_key_through_the_catalogue(tmp_path: Path) -> None:
    """Same bytes, another modification time: the snapshot is the same, the catalogue's date is not."""
    night = _night(tmp_path, date_from_file_clock=True)
    target = night.corpus / "docs" / "doc-sans-date.md"  # no date in front matter nor text
    target.write_text("# Note d'équipe\n\nHttpx garde les connexions ouvertes entre deux appels.\n")
    key, snapshot = night.key(), corpus_inputs(night.settings).snapshot
    stamp = target.stat().st_mtime - 400 * 86400
    os.utime(target, (stamp, stamp))
    assert night.key() != key
    assert corpus_inputs(night.settings).snapshot == snapshot


@pytest.mark.parametrize("name", ["authority.toml", "grid.toml", "prices.toml"])
def test_a_file_of_a_configuration_folder_outside_the_package_edited_in_place_changes_the_key(
    tmp_path: Path, name: str
) -> None:
    config = tmp_path / "config"
    night = _night(tmp_path)
    shutil.copytree(night.settings.config_dir, config)
    night = _settings(night, config_dir=config)
    key = night.key()
    _append(config / name, "\n# édité\n")
    assert night.key() != key
