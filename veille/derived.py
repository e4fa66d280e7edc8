"""Derived files are caches: an unreadable one is moved aside (named in a warning) and rebuilt.

The summary index, a run's Parquet files (rebuilt from its run folder) and the corpus database
(rebuilt from the corpus files) hold nothing their sources do not. A garbage copy must not stop
every later night, and must not be deleted either (it may be wanted for a post-mortem): it is
renamed ``<name>.unreadable-<UTC stamp>`` beside itself, which no reader's glob matches.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["UNREADABLE_SUFFIX", "set_aside"]

logger = logging.getLogger(__name__)

UNREADABLE_SUFFIX = ".unreadable-"


def set_aside(path: Path, reason: str, outcome: str) -> Path:
    """Rename ``path`` to ``<name>.unreadable-<stamp>`` (a hidden name for Parquet files, so table globs
    skip it) and log a warning naming both; returns the new path."""
    path = Path(path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    hidden = "." if path.suffix == ".parquet" and not path.name.startswith(".") else ""
    target = path.with_name(f"{hidden}{path.name}{UNREADABLE_SUFFIX}{stamp}")
    os.replace(path, target)
    logger.warning("%s is unreadable (%s): moved aside to %s; %s", path, reason[:200], target, outcome)
    return target
