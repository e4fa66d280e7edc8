"""Crash and resume: `veille run` killed with SIGKILL at every stage and at random moments, then rerun.

Each trial kills a `veille run` process (offline backend, bundled corpus copy, one warehouse shared by
every trial, like a real deployment's) and runs it again. Kills land either at a fixed stage boundary
(``VEILLE_TEST_KILL_AT``, see tests/killhooks.py and veille/checkpoints.py: a fast run would make random delays miss the
short stages) or after a seeded random delay. After each kill and each rerun the test checks:

- the rerun completes (exit 0, run.json ``completed``);
- completed branches are not recomputed: the rerun's journal has a planner call only if the killed
  run did not persist its plan, and analyst calls exactly for the branches whose result the killed
  run had not persisted (read back from ``prefect-results``);
- the Parquet warehouse: every visible file reads back, no duplicate run row, no table file of an
  uncommitted run once the rerun is done (the killed run is recorded by the rerun: veille/run/recovery.py),
  summary index in line with the files;
- the DuckDB corpus database opens read-only right after the kill, a kill inside the ingestion
  transaction leaves the previous commit intact, and after the rerun it holds exactly the corpus files.

Every trial uses its own role temperatures (``VEILLE_ROLES``), hence its own task cache keys: the killed
run computes everything, and what it persisted before dying is exactly what the rerun may reuse.
The runs are forked from a pre-imported process (tests/crashkit.py) so the 20+ trials fit in about
two minutes on 2 CPUs.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.crashkit import (
    DatabaseState,
    Zygote,
    assert_warehouse_consistent,
    corpus_hashes,
    database_state,
    journal,
    persisted_results,
    run_folder_from_output,
    start_zygote,
    warehouse_state,
)
from veille.settings import Settings
from veille.store.migrations import MIGRATIONS

pytestmark = [pytest.mark.process, pytest.mark.slow, pytest.mark.timeout(900)]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SEED = 20261130
RANDOM_KILLS = 8  # landed kills wanted at random moments (12 fixed + 8 random = 20 trials)
RANDOM_ATTEMPTS = 30  # a delay longer than the run lets it finish: not a kill, drawn again (shorter)

# (kill point, corpus change made just before the killed run)
FIXED_TRIALS: list[tuple[str, str]] = [
    ("ingest", ""),  # the very first run: the database is being created
    ("analyse#1", ""),  # the first branch computed, none persisted yet
    ("analyse#4", ""),  # mid fan-out: some branches persisted
    ("review#1", ""),
    ("outputs", ""),
    ("record#1", ""),
    ("record#5", ""),
    ("record#8", ""),  # every table but the runs commit marker
    ("record#9", ""),  # committed, summary index not updated, lock not released
    ("ingest", "edit"),  # an updated document inside the open transaction
    ("ingest", "delete"),  # a removal
    ("ingest", "restore"),  # the document back
]
EDITED_DOC = "doc-12.md"


@pytest.fixture(scope="module")
def zygote(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    process = start_zygote(tmp_path_factory.mktemp("crash"))
    try:
        yield process
    finally:
        process.close()


def _roles(trial: int) -> str:
    """VEILLE_ROLES for one trial: default roles, planner and analyst temperatures made unique."""
    roles = {name: spec.model_dump() for name, spec in Settings().roles.items() if name != "analyst_update"}
    roles["planner"]["temperature"] = round(0.1 + trial / 1000, 3)
    roles["analyst"]["temperature"] = round(0.2 + trial / 1000, 3)
    return json.dumps(roles)


def _change_corpus(corpus: Path, change: str, stash: Path) -> None:
    doc = corpus / "docs" / EDITED_DOC
    if change == "edit":
        with doc.open("a", encoding="utf-8") as handle:
            handle.write("\nMise à jour : chiffre confirmé par l'éditeur.\n")
    elif change == "delete":
        shutil.move(doc, stash)
    elif change == "restore":
        shutil.move(stash, doc)


@dataclass
class Trial:
    number: int
    kill_at: str  # a kill point, or "random@<seconds>"
    change: str = ""
    stage_reached: str = ""
    persisted_before_kill: list[str] = field(default_factory=list)
    truncated_results: int = 0
    orphan_tables_after_kill: int = 0
    rerun_planner_calls: int = 0
    rerun_analysts: list[str] = field(default_factory=list)
    killed_status: str | None = None  # runs.status of the killed run once the rerun recorded it
    db_after_kill: DatabaseState | None = None


def _stage_reached(run_dir: Path | None, persisted: list[str], branches: int, committed: bool) -> str:
    """Where a randomly killed run was, from what it left behind."""
    if run_dir is None or not any(not p.name.startswith(".") for p in run_dir.iterdir()):
        return "start-up/ingest"
    if committed:
        return "after the commit marker"
    if (run_dir / "run.json").exists():
        return "grading/recording"
    if (run_dir / "documents.json").exists():
        return "outputs"
    if "plan" not in persisted:
        return "catalogue/plan"
    done = sum(1 for p in persisted if p.startswith("analyse:"))
    return f"fan-out ({done}/{branches} persisted)" if done < branches else "writer/review"


def test_sigkill_at_any_point_then_rerun_loses_nothing(
    zygote: Zygote, tmp_path: Path, reliability: Any
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(PROJECT_ROOT / "corpus", corpus, ignore=shutil.ignore_patterns("reference"))
    shutil.copytree(PROJECT_ROOT / "corpus" / "reference", corpus / "reference")
    warehouse = tmp_path / "warehouse"
    db_path, results = warehouse / "veille.duckdb", warehouse / "prefect-results"
    argv = ["run", "--corpus", str(corpus), "--warehouse", str(warehouse), "--backend", "offline"]
    stash = tmp_path / EDITED_DOC
    rng = random.Random(SEED)

    trials: list[Trial] = []
    full_run_s: list[float] = []

    plan_kinds = list(FIXED_TRIALS) + [("random", "")] * RANDOM_ATTEMPTS
    for number, (kill_at, change) in enumerate(plan_kinds, start=1):
        random_kills = sum(1 for t in trials if t.kill_at.startswith("random"))
        if kill_at == "random" and random_kills >= RANDOM_KILLS:
            break
        env = {"VEILLE_ROLES": _roles(number)}
        _change_corpus(corpus, change, stash)
        folders_before = {p.name for p in (warehouse / "runs").iterdir()} if warehouse.exists() else set()
        results_before = set(persisted_results(results))
        db_before = database_state(db_path) if db_path.exists() else None

        # --- the killed run
        if kill_at == "random":
            # Within the shortest recent run: on a loaded machine durations vary by a factor of 2-3,
            # and a delay past the run's end lands no kill.
            delay = round(rng.uniform(0.05, 0.9 * min(full_run_s[-6:])), 2)
            zygote.start(argv, env)
            time.sleep(delay)
            zygote.kill_current()
            killed = zygote.wait()
            if killed.code == 0:
                full_run_s.append(killed.seconds)
                continue  # the run finished before the delay: not a crash, draw again
            kill_at = f"random@{delay}s"
        else:
            killed = zygote.run(argv, {**env, "VEILLE_TEST_KILL_AT": kill_at})
        assert killed.code == -9, f"{kill_at}: expected SIGKILL, got {killed.code}\n{killed.err[-3000:]}"
        trial = Trial(number, kill_at, change)

        new_folders = {p.name for p in (warehouse / "runs").iterdir()} - folders_before
        assert len(new_folders) <= 1
        killed_dir = warehouse / "runs" / new_folders.pop() if new_folders else None
        after_kill = persisted_results(results)
        new_results = {k: v for k, v in after_kill.items() if k not in results_before}
        trial.persisted_before_kill = sorted(v for v in new_results.values() if v)
        trial.truncated_results = sum(1 for v in new_results.values() if v is None)
        state = warehouse_state(warehouse)
        assert not state.unreadable, state.unreadable  # atomic writes: a kill never leaves a half file
        assert all(n == 1 for n in state.runs_rows.values())
        trial.orphan_tables_after_kill = sum(len(v) for v in state.orphans.values())
        killed_committed = killed_dir is not None and killed_dir.name in state.committed

        # The database opens right after the kill; a kill inside the ingestion keeps the last commit.
        if db_path.exists():
            trial.db_after_kill = database_state(db_path)
            assert trial.db_after_kill.schema_version == MIGRATIONS[-1][0]
            if kill_at == "ingest":
                before = db_before or DatabaseState(MIGRATIONS[-1][0], 0, {})
                assert trial.db_after_kill == before, f"{kill_at}/{change}: uncommitted ingestion visible"
        # ingest.json is written once the ingestion committed (a kill in between leaves it out).
        ingest_committed = killed_dir is not None and (killed_dir / "ingest.json").exists()

        # --- the rerun
        rerun = zygote.run(argv, env)
        assert rerun.code == 0, f"rerun after {kill_at}: exit {rerun.code}\n{rerun.err[-4000:]}"
        full_run_s.append(rerun.seconds)
        run_dir = run_folder_from_output(rerun.out)
        assert json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["status"] == "completed"

        # Completed work is not recomputed: exactly what the killed run had not persisted runs again.
        plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
        subtasks = {st["id"] for st in plan["sub_tasks"]}
        persisted_branches = {p.removeprefix("analyse:") for p in trial.persisted_before_kill if p != "plan"}
        calls = journal(run_dir)
        trial.rerun_planner_calls = sum(1 for c in calls if c.role == "planner")
        trial.rerun_analysts = sorted({str(c.subtask_id) for c in calls if c.role == "analyst"})
        assert (trial.rerun_planner_calls > 0) == ("plan" not in trial.persisted_before_kill), kill_at
        assert set(trial.rerun_analysts) == subtasks - persisted_branches, kill_at
        assert not any(c.cache_hit for c in calls)  # offline backend: reuse comes from the task cache

        # The warehouse: consistent, the rerun recorded, the killed run recorded by the rerun's recovery.
        state = warehouse_state(warehouse)
        assert_warehouse_consistent(state)
        assert run_dir.name in state.committed
        if killed_dir is not None and killed_dir.name in state.committed:
            trial.killed_status = state.statuses[killed_dir.name]
            has_run_json = (killed_dir / "run.json").exists()
            assert trial.killed_status == ("completed" if has_run_json else "failed")
        trial.stage_reached = _stage_reached(
            killed_dir, trial.persisted_before_kill, len(subtasks), killed_committed
        )

        # The database: opens, holds exactly the corpus files; one ingestion row for the rerun, plus one
        # for the killed run if its ingestion committed (never for a kill inside the transaction).
        db = database_state(db_path)
        assert db.documents and set(db.documents.values()) == corpus_hashes(corpus)
        added = db.ingest_runs - (db_before.ingest_runs if db_before else 0)
        if kill_at == "ingest":
            assert added == 1, (kill_at, change, added)
        elif ingest_committed:
            assert added == 2, (kill_at, added)
        else:
            assert added in (1, 2), (kill_at, added)  # killed between the commit and ingest.json
        trials.append(trial)

    random_trials = [t for t in trials if t.kill_at.startswith("random")]
    assert len(trials) >= 20 and len(random_trials) == RANDOM_KILLS, (len(trials), len(random_trials))
    _record(reliability, trials)


def _record(reliability: Any, trials: list[Trial]) -> None:
    def group(prefix: str) -> list[Trial]:
        return [t for t in trials if t.kill_at.startswith(prefix)]

    ingest = group("ingest")
    reliability.record(
        "SIGKILL of `veille run` inside the ingestion transaction (first run; edited, deleted, restored document)",
        "the corpus database keeps its previous commit and opens; the rerun completes, ingests the change "
        "and recomputes plan and branches; the killed run is recorded by the rerun",
        f"{len(ingest)} trials: database unchanged by the kill each time "
        f"(ingest_runs {', '.join(str(t.db_after_kill.ingest_runs if t.db_after_kill else 0) for t in ingest)}); "
        f"rerun completed with planner + {len(ingest[0].rerun_analysts)} analyst calls, documents = corpus files; "
        f"killed runs recorded as {sorted({str(t.killed_status) for t in ingest})}",
    )
    fanout = group("analyse")
    reliability.record(
        "SIGKILL during the fan-out (once the 1st or the 4th of 6 analyst branches is computed)",
        "the rerun reuses the plan and every branch persisted before the kill, recomputes only the others",
        "; ".join(
            f"{t.kill_at}: {sum(p.startswith('analyse:') for p in t.persisted_before_kill)} branch(es) persisted, "
            f"rerun: {t.rerun_planner_calls} planner call(s), analysts {t.rerun_analysts or 'none'}"
            for t in fanout
        ),
    )
    late = group("review") + group("outputs")
    reliability.record(
        "SIGKILL in the review loop (after the critic's round) or while writing the run folder (before run.json)",
        "the rerun makes no planner or analyst call (all persisted) and completes; the killed run is "
        "recorded as failed with run.json missing",
        "; ".join(
            f"{t.kill_at}: rerun {t.rerun_planner_calls} planner / {len(t.rerun_analysts)} analyst calls, "
            f"killed run recorded {t.killed_status}"
            for t in late
        ),
    )
    record = group("record")
    reliability.record(
        "SIGKILL during the Parquet recording (after table file 1, 5, 8 or 9 of 9)",
        "no half-written file (temporary name + rename); table files without the runs commit marker are "
        "completed by the rerun's recovery: no partial recording, no duplicate run row",
        "; ".join(
            f"{t.kill_at}: {t.orphan_tables_after_kill} table file(s) without commit after the kill, "
            f"0 after the rerun, killed run {t.killed_status or 'already committed'}"
            for t in record
        ),
    )
    random_trials = group("random")
    stages: dict[str, int] = {}
    for t in random_trials:
        stages[t.stage_reached] = stages.get(t.stage_reached, 0) + 1
    reliability.record(
        f"SIGKILL at {len(random_trials)} random moments (seeded delays: "
        f"{', '.join(t.kill_at.removeprefix('random@') for t in random_trials)})",
        "same invariants as the fixed kill points whatever the stage",
        f"stages hit: {', '.join(f'{k} ×{v}' for k, v in sorted(stages.items()))}; "
        f"{sum(t.truncated_results for t in random_trials)} truncated task result(s) (recomputed); "
        f"every rerun completed, warehouse and database consistent ({len(trials)} trials in all)",
    )
