"""What `veille clean` may delete (persisted task results, optionally the response cache), and deleting it."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from veille.settings import Settings

__all__ = ["CleanTarget", "clean", "clean_targets"]


@dataclass(frozen=True)
class CleanTarget:
    """A directory ``veille clean`` may delete, and why it exists."""

    path: Path
    what: str


def clean_targets(settings: Settings, *, responses: bool = False) -> list[CleanTarget]:
    """Directories holding persisted task results (and cache records), per working directory.

    The model response cache is only included with ``responses=True``: deleting it makes the
    next run pay for every model call again.
    """
    targets = [
        CleanTarget(
            settings.warehouse_dir / "prefect-results",
            "Prefect task results and cache records (retry only the failed branches)",
        )
    ]
    if responses:
        targets.append(CleanTarget(settings.cache_dir, "model response cache"))
    return targets


def clean(targets: Sequence[CleanTarget], *, dry_run: bool = False) -> list[Path]:
    """Delete the existing target directories; return those deleted (or that would be)."""
    removed: list[Path] = []
    for target in targets:
        path = target.path
        if not path.exists():
            continue
        if not path.is_dir():
            raise ValueError(f"{path}: expected a directory to clean, found a file")
        if not dry_run:
            shutil.rmtree(path)
        removed.append(path)
    return removed
