"""Task: before a night writes anything, move aside and rebuild the warehouse's unreadable derived files.

Done first (not at recording, which comes after the report and its delivery) so that what was moved
aside is in this night's alerts (``veille.derived``: the flow collects every move). A failure here
is a warning: the night goes on, and recording meets the same files later.
"""

from __future__ import annotations

import logging

from prefect.cache_policies import NO_CACHE

from veille.settings import Settings
from veille.tasks.datatask import task
from veille.warehouse import update_summary_index
from veille.warehouse.repair import repair_unreadable_files

__all__ = ["repair_warehouse"]

logger = logging.getLogger(__name__)


@task(name="repair-warehouse", cache_policy=NO_CACHE)  # reads the files as they are tonight
def repair_warehouse(settings: Settings) -> int:
    """Unreadable committed Parquet files rebuilt from their run folders (or only moved aside), an
    unreadable summary index rebuilt; returns how many Parquet files were moved aside."""
    if not settings.parquet_dir.is_dir():
        return 0
    try:
        repairs = repair_unreadable_files(settings.parquet_dir, settings.runs_dir)
        update_summary_index(settings.parquet_dir)
    except Exception as exc:  # the night's own work does not depend on the older runs' files
        logger.warning("could not check the warehouse's derived files: %s: %s", type(exc).__name__, exc)
        return 0
    if repairs.count:
        logger.warning(
            "unreadable Parquet files moved aside: %d rebuilt from their run folders, %d not",
            len(repairs.rebuilt),
            len(repairs.moved_only),
        )
    return repairs.count
