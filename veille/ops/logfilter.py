"""One clear ERROR line for an expected failure, instead of Prefect's traceback.

Prefect logs a failed task run (``Task run failed with exception: …``) and a failed flow run
(``Encountered exception during execution: …``) with ``exc_info``: some 35 lines of frames for a
run that failed on purpose or on bad input — a drill (``fail_subtasks``), a corpus refused in strict
mode, an unusable plan, nothing listening at the Gemini address. Prefect 3.9 has no setting for
it, so a logging filter on its run loggers drops the frames when the exception's class says
``expected_failure = True``; the line keeps the exception's type and message, and any other
exception keeps its traceback. An error of the machine (disk full, read-only, a file where a folder
should be: ``veille.oserrors.environment_error``, DuckDB's wording of one included) is expected too:
its line names the path. Installed when the flow module is imported (CLI runs, deployments,
``veille serve``).

A flow that returns a Failed state on purpose (a partial report: the state message names the failed
branches; a drill's deliberate partial night) makes Prefect's engine raise ``FailedRun`` in a deployed
run and log it at ERROR as « Engine execution exited with unexpected exception » with its frames. It is
neither unexpected nor a crash: the failed branches were logged as errors by their own task runs, so
this line becomes a WARNING saying the flow ended in the state it returned, with the state's message.
"""

from __future__ import annotations

import logging

from veille.oserrors import environment_error
from veille.secrets import scrub_text

__all__ = [
    "RUN_LOGGERS",
    "ExpectedFailureFilter",
    "LibraryDebugFilter",
    "install_expected_failure_filter",
    "install_library_debug_filter",
]

# prefect.engine: the subprocess entry point of a deployed run logs the same exception there.
RUN_LOGGERS = ("prefect.task_runs", "prefect.flow_runs", "prefect.engine")


class ExpectedFailureFilter(logging.Filter):
    """Strips the traceback of records about an exception marked ``expected_failure``."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and _failed_state(exc):
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
            record.msg = "flow run ended in the Failed state the flow returned (not a crash): %s"
            record.args = (scrub_text(str(exc)),)
            return True
        environment = exc is not None and environment_error(exc) is not None  # DuckDB's text of one too
        if exc is not None and (environment or getattr(exc, "expected_failure", False)):
            record.exc_info, record.exc_text = None, None
            # Scrubbed here too: the record factory masked the message before this filter adds to it.
            said = scrub_text(str(exc))
            if said not in record.getMessage():  # the line alone must say what failed
                record.msg, record.args = f"{record.getMessage()}: {type(exc).__name__}: {said}", None
        return True


def _failed_state(exc: BaseException) -> bool:
    from prefect.exceptions import FailedRun

    return isinstance(exc, FailedRun)


def install_expected_failure_filter() -> None:
    """Add the filter to Prefect's run loggers once (idempotent)."""
    for name in RUN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, ExpectedFailureFilter) for f in logger.filters):
            logger.addFilter(ExpectedFailureFilter())


# Loggers whose level is this project's or Prefect's own setting (PREFECT_LOGGING_LEVEL...): never filtered.
_OWN_LOGGERS = ("veille", "prefect")


class LibraryDebugFilter(logging.Filter):
    """Drops a library's DEBUG records unless the root logger itself is at DEBUG.

    Prefect shows libraries at the root's level (WARNING by default, PREFECT_LOGGING_ROOT_LEVEL), but a
    library that sets its own logger to DEBUG (bm25s does, at import) bypasses it and printed « DEBUG |
    bm25s - Building index from tokens » in every run's output. On the handlers, so it holds whenever
    the library is imported and whatever level it gives itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.INFO or logging.getLogger().getEffectiveLevel() <= logging.DEBUG:
            return True
        top = record.name.split(".", 1)[0]
        return top in _OWN_LOGGERS


def install_library_debug_filter() -> None:
    """Add :class:`LibraryDebugFilter` to every handler of the root logger once (idempotent)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, LibraryDebugFilter) for f in handler.filters):
            handler.addFilter(LibraryDebugFilter())
