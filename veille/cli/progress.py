"""Progress bars of `veille run` and `veille ingest` on a terminal: ingestion (files), analysis
(branches), review (critic rounds), fed by veille.progress.

The bars share the console Prefect's log handler prints to, so a log line is printed above them
instead of through them; without a terminal (a pipe, a file, CI) nothing is drawn and the output
is the same as without bars.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from rich.console import Console
from rich.default_styles import DEFAULT_STYLES
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.theme import Theme

from veille import progress

__all__ = ["log_console", "showing_progress"]


def log_console() -> Console | None:
    """The rich console of the root logger's handler (Prefect's console handler), if there is one."""
    for handler in logging.getLogger().handlers:
        console = getattr(handler, "console", None)
        if isinstance(console, Console):
            return console
    return None


class _Bars:
    """One bar per stage, created on its first report."""

    def __init__(self, bars: Progress) -> None:
        self.bars = bars
        self.tasks: dict[str, TaskID] = {}
        self.broken = False

    def __call__(self, event: progress.Progress) -> None:
        if self.broken:
            return
        try:
            self._draw(event)
        except Exception:  # a display error (a terminal gone, a style) must not fail the step
            self.broken = True

    def _draw(self, event: progress.Progress) -> None:
        label = progress.STAGES.get(event.stage, event.stage)
        # A note names files and branches (data): escaped, so « [old] rapport.md » is never a style.
        description = escape(f"{label} — {event.note}" if event.note else label)
        if event.stage not in self.tasks:
            for stage, task in self.tasks.items():  # a step starts: the earlier ones are over
                self.bars.update(task, description=escape(progress.STAGES.get(stage, stage)))
            self.tasks[event.stage] = self.bars.add_task(description, total=event.total)
        self.bars.update(
            self.tasks[event.stage], completed=event.done, total=event.total, description=description
        )


# Prefect's console handler has its own theme, without rich's progress styles: only those are added.
_STYLES = Theme({k: v for k, v in DEFAULT_STYLES.items() if k.startswith(("bar.", "progress."))})


@contextmanager
def showing_progress(console: Console | None = None) -> Iterator[bool]:
    """While active, veille.progress reports draw bars on ``console`` (default: the log handler's,
    else stderr) when it is a terminal; yields whether bars are drawn. Drawing never fails a run: a
    display error stops the bars, the run goes on."""
    out = console or log_console() or Console(stderr=True)
    if not out.is_terminal:
        yield False
        return
    out.push_theme(_STYLES)
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
    )
    draw = _Bars(bars)
    stop = progress.watch(draw)
    try:
        bars.start()
        yield True
    finally:
        stop()
        with suppress(Exception):
            bars.stop()
        out.pop_theme()
